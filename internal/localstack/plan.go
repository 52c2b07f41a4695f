package localstack

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// ControlPlaneName names the control plane in data-dir paths and component
// names. Its kubeconfig context is ControlPlaneContext, as in Karmada.
const (
	ControlPlaneName    = "control-plane"
	ControlPlaneContext = "karmada-apiserver"
)

// ControlPlaneControllers are the kube-controller-manager controllers a
// Karmada control plane keeps. Without the workload controllers a Deployment
// on the control plane stays a resource template and never makes pods. The
// bootstrap and CSR controllers serve Pull-mode registration (package
// bootstrap): signing kube-public/cluster-info for each bootstrap token,
// deleting expired tokens, signing approved agent certificates and
// removing old CSRs.
var ControlPlaneControllers = []string{
	"namespace-controller",
	"garbage-collector-controller",
	"serviceaccount-token-controller",
	"clusterrole-aggregation-controller",
	"bootstrap-signer-controller",
	"token-cleaner-controller",
	"certificatesigningrequest-signing-controller",
	"certificatesigningrequest-cleaner-controller",
}

// FlotillaControllers are the stack's Flotilla controllers: all of them,
// with agentcsrapproving, which Karmada leaves off by default, approving
// Pull-mode agents' certificates.
const FlotillaControllers = "*,agentcsrapproving"

// Component kinds, also the hidden `flotilla component <kind>` subcommands.
const (
	KindAPIServer         = "kube-apiserver"
	KindControllerManager = "kube-controller-manager"
	KindScheduler         = "kube-scheduler"
	KindKwok              = "kwok"
	// KindMetrics serves a member's metrics APIs (package membermetrics).
	KindMetrics = "metrics"
	// KindFlotillaControllerManager is `flotilla controller-manager`.
	KindFlotillaControllerManager = "flotilla-controller-manager"
	// KindMetricsAdapter is `flotilla metrics-adapter`.
	KindMetricsAdapter = "metrics-adapter"
	// KindSearch is `flotilla search`.
	KindSearch = "search"
	// KindAgent is `flotilla agent`, a Pull-mode member's agent.
	KindAgent = "flotilla-agent"
	// KindDashboard is `flotilla dashboard`.
	KindDashboard = "dashboard"
	// KindLightMembers hosts every light member's kube-apiserver in one
	// process on one etcd (component.RunLightMembers).
	KindLightMembers = "light-members"
)

// LightMembersName names the light members' host: its component, its
// ports.json keys and its directory under clusters/ (the shared etcd).
const LightMembersName = "light-members"

// Component is one child process of the stack.
type Component struct {
	// Name is "<cluster>/<kind>", e.g. "member1/kube-apiserver".
	Name    string
	Cluster string
	Kind    string
	// Args follow the flotilla binary: ["component", kind, ...].
	Args []string
	// LogFile receives the process's stdout and stderr.
	LogFile string
	// HealthURL is polled (with the admin client certificate) until it
	// answers 200; empty for components without an endpoint (kwok).
	HealthURL string
	// MetricsURL is where a Flotilla component (controller manager,
	// agent) serves Prometheus metrics; empty for the others.
	MetricsURL string
}

// ClusterPlan is one Kubernetes cluster of the stack: the control plane or a member.
type ClusterPlan struct {
	Name string
	// Member is nil for the control plane.
	Member *MemberConfig
	// Dir holds the cluster's etcd data and its admin kubeconfig.
	Dir string
	// Kubeconfig is the admin kubeconfig used by the cluster's own components.
	Kubeconfig    string
	APIServerPort int
	EtcdPorts     [2]int
	// KwokPort serves every simulated node's kubelet endpoints (kwok's
	// --node-port); ResourceMetricsPort serves metrics.k8s.io and
	// CustomMetricsPort custom.metrics.k8s.io and external.metrics.k8s.io.
	// All three are 0 for the control plane and bare members.
	KwokPort, ResourceMetricsPort, CustomMetricsPort int
	// MetricsAdapterPort serves the control plane's metrics APIs (the
	// metrics adapter); 0 for members, and for a stack whose members are
	// all bare (nothing to measure).
	MetricsAdapterPort int
	// SearchPort serves search.karmada.io (the search server) on the
	// control plane; 0 for members.
	SearchPort int
	Components []Component
	// Agent is a Pull-mode member's `flotilla agent`, started once the
	// member is registered; its Kind is empty for other clusters.
	Agent Component
}

// Light reports whether the cluster is a light member, whose API server
// runs in Plan.LightMembers rather than in a process of its own.
func (c *ClusterPlan) Light() bool { return c.Member != nil && c.Member.Light }

// Server returns the cluster's API server URL.
func (c *ClusterPlan) Server() string {
	return fmt.Sprintf("https://127.0.0.1:%d", c.APIServerPort)
}

// Plan is everything `flotilla up` will start, in start order.
type Plan struct {
	DataDir  string
	PKI      PKI
	Clusters []*ClusterPlan
	// KwokConfig is the file with kwok's node and pod stages.
	KwokConfig string
	// ControllerManager runs Flotilla's controllers against the control
	// plane; it starts once the Karmada CRDs are installed.
	ControllerManager Component
	// StandbyControllerManagers are the other replicas of
	// Config.ControllerManagerReplicas, started after ControllerManager.
	StandbyControllerManagers []Component
	// MetricsAdapter serves the control plane's metrics APIs from the
	// members (`flotilla metrics-adapter`); it starts before the controller
	// manager. Its Kind is empty when the stack has no simulated member.
	MetricsAdapter Component
	// Search is `flotilla search` (Karmada's karmada-search): the
	// search.karmada.io API, ResourceRegistries in the control plane's etcd.
	// It starts with the metrics adapter.
	Search Component
	// Dashboard is `flotilla dashboard`: the web dashboard over HTTPS
	// (DashboardURL), started last.
	Dashboard Component
	// LightMembers hosts the API servers of the light members
	// (MemberConfig.Light), started with the clusters; its Kind is empty
	// when there are none. Its HealthURL answers 200 once every one is
	// ready.
	LightMembers Component
	// NoAdmissionClaim turns the control plane's AdmissionClaimPlugin off
	// (Config.NoAdmissionClaim).
	NoAdmissionClaim bool
	// FeatureGates is the --feature-gates value the stack's components get
	// (Config.EffectiveFeatureGates).
	FeatureGates string
}

// ControlPlane returns the control plane's cluster plan.
func (p *Plan) ControlPlane() *ClusterPlan { return p.Clusters[0] }

// Members returns the member clusters' plans.
func (p *Plan) Members() []*ClusterPlan { return p.Clusters[1:] }

// Components returns every component of every cluster.
func (p *Plan) Components() []Component {
	var all []Component
	for _, c := range p.Clusters {
		all = append(all, c.Components...)
	}
	return all
}

// KarmadaKubeconfig and MembersKubeconfig are the user-facing kubeconfigs,
// named as Karmada's local setup names them.
func (p *Plan) KarmadaKubeconfig() string { return filepath.Join(p.DataDir, "karmada.config") }

// MembersKubeconfig holds one context per member cluster, named after it.
func (p *Plan) MembersKubeconfig() string { return filepath.Join(p.DataDir, "members.config") }

// LogDir is where every component writes its log.
func (p *Plan) LogDir() string { return filepath.Join(p.DataDir, "logs") }

// BuildPlan lays out the stack for cfg, taking ports from ports. It starts
// nothing and touches no files, so it also serves `up --dry-run`.
func BuildPlan(cfg *Config, ports PortAllocator) (*Plan, error) {
	p := &Plan{DataDir: cfg.DataDir, PKI: PKIPaths(cfg.DataDir), NoAdmissionClaim: cfg.NoAdmissionClaim, FeatureGates: cfg.EffectiveFeatureGates()}
	p.KwokConfig = filepath.Join(cfg.DataDir, "kwok-stages.yaml")
	cp, err := p.cluster(ControlPlaneName, nil, ports)
	if err != nil {
		return nil, err
	}
	p.Clusters = append(p.Clusters, cp)
	cmPort, err := ports.Port(ControllerManagerHealthPort)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(cfg.Members, func(m MemberConfig) bool { return !m.Bare }) {
		if cp.MetricsAdapterPort, err = ports.Port("flotilla/metrics-adapter"); err != nil {
			return nil, err
		}
		p.MetricsAdapter = p.aggregatedServer(cp, KindMetricsAdapter, cp.MetricsAdapterPort)
	}
	agentPorts := map[string]int{}
	for i := range cfg.Members {
		m, err := p.cluster(cfg.Members[i].Name, &cfg.Members[i], ports)
		if err != nil {
			return nil, err
		}
		if m.Member.Pull {
			if agentPorts[m.Name], err = ports.Port(AgentHealthPort(m.Name)); err != nil {
				return nil, err
			}
		}
		p.Clusters = append(p.Clusters, m)
	}
	if err := p.lightMembers(ports); err != nil {
		return nil, err
	}
	// The metrics ports come last, so that adding them moved no other
	// component's port in existing plans.
	cmMetrics, err := ports.Port(ControllerManagerMetricsPort)
	if err != nil {
		return nil, err
	}
	p.ControllerManager = p.flotillaControllerManager(cfg, 1, cmPort, cmMetrics)
	for r := 2; r <= cfg.ControllerManagerReplicas; r++ {
		health, err := ports.Port(fmt.Sprintf("%s-%d", ControllerManagerHealthPort, r))
		if err != nil {
			return nil, err
		}
		metrics, err := ports.Port(fmt.Sprintf("%s-%d", ControllerManagerMetricsPort, r))
		if err != nil {
			return nil, err
		}
		p.StandbyControllerManagers = append(p.StandbyControllerManagers, p.flotillaControllerManager(cfg, r, health, metrics))
	}
	for _, m := range p.Members() {
		if !m.Member.Pull {
			continue
		}
		metricsPort, err := ports.Port(AgentMetricsPort(m.Name))
		if err != nil {
			return nil, err
		}
		m.Agent = p.agent(m, agentPorts[m.Name], metricsPort)
	}
	if cp.SearchPort, err = ports.Port("flotilla/search"); err != nil {
		return nil, err
	}
	p.Search = p.aggregatedServer(cp, KindSearch, cp.SearchPort, fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", cp.EtcdPorts[0]))
	dashboardPort, err := ports.Port(DashboardPort)
	if err != nil {
		return nil, err
	}
	p.Dashboard = p.dashboard(cp, dashboardPort)
	return p, nil
}

// DashboardPort is the ports.json key of the dashboard's HTTPS port.
const DashboardPort = "flotilla/dashboard"

// DashboardURL is where the stack's dashboard answers.
func (p *Plan) DashboardURL() string {
	for _, a := range p.Dashboard.Args {
		if port, ok := strings.CutPrefix(a, "--secure-port="); ok {
			return "https://127.0.0.1:" + port
		}
	}
	return ""
}

// dashboard is `flotilla dashboard` on port, with the control plane's
// admin credentials (to watch and to impersonate certificate users), the
// stack's CA for client certificates, and every Flotilla component's
// metrics to plot.
func (p *Plan) dashboard(cp *ClusterPlan, port int) Component {
	args := []string{KindDashboard, "--kubeconfig=" + cp.Kubeconfig,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file=" + p.PKI.ServingCert, "--tls-private-key-file=" + p.PKI.ServingKey,
		"--client-ca-file=" + p.PKI.CACert}
	for _, c := range append([]Component{p.ControllerManager}, p.StandbyControllerManagers...) {
		args = append(args, "--metrics-url="+c.Name+"="+c.MetricsURL)
	}
	for _, m := range p.Members() {
		if m.Agent.Kind != "" {
			args = append(args, "--metrics-url="+m.Agent.Name+"="+m.Agent.MetricsURL)
		}
	}
	return Component{Name: KindDashboard, Cluster: ControlPlaneName, Kind: KindDashboard, Args: args,
		LogFile:   filepath.Join(p.LogDir(), KindDashboard+".log"),
		HealthURL: fmt.Sprintf("https://127.0.0.1:%d/healthz", port)}
}

// aggregatedServer is a Flotilla aggregated API server of the control plane
// (`flotilla <kind>`): the control plane's kubeconfig, then extra flags, then
// serving on 127.0.0.1:port with the stack's certificate.
func (p *Plan) aggregatedServer(cp *ClusterPlan, kind string, port int, extra ...string) Component {
	args := append([]string{kind, "--kubeconfig=" + cp.Kubeconfig}, extra...)
	return Component{
		Name: kind, Cluster: ControlPlaneName, Kind: kind,
		Args: append(args,
			"--bind-address=127.0.0.1",
			fmt.Sprintf("--secure-port=%d", port),
			"--tls-cert-file="+p.PKI.ServingCert,
			"--tls-private-key-file="+p.PKI.ServingKey),
		LogFile:   filepath.Join(p.LogDir(), kind+".log"),
		HealthURL: fmt.Sprintf("https://127.0.0.1:%d/healthz", port),
	}
}

// Keys of ports.json for the Flotilla components' endpoints: /healthz and
// /readyz on one port, /metrics on another, both on 127.0.0.1.
const (
	ControllerManagerHealthPort  = "flotilla/controller-manager"
	ControllerManagerMetricsPort = "flotilla/controller-manager-metrics"
)

// AgentHealthPort is the ports.json key of the probe port of a Pull-mode
// member's agent: one per member, so agents never share one.
func AgentHealthPort(member string) string { return member + "/" + KindAgent }

// AgentMetricsPort is the ports.json key of the metrics port of a
// Pull-mode member's agent.
func AgentMetricsPort(member string) string { return member + "/" + KindAgent + "-metrics" }

// flotillaControllerManager is replica r (from 1) of `flotilla
// controller-manager` against the control plane, probed on healthPort and
// serving metrics on metricsPort.
func (p *Plan) flotillaControllerManager(cfg *Config, r, healthPort, metricsPort int) Component {
	name := "flotilla-controller-manager"
	if r > 1 {
		name = fmt.Sprintf("%s-%d", name, r)
	}
	args := []string{"controller-manager",
		"--kubeconfig=" + p.KarmadaKubeconfig(), "--context=" + ControlPlaneContext,
		// One replica: no election, so a restart resumes at once.
		fmt.Sprintf("--leader-elect=%t", cfg.ControllerManagerReplicas > 1),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", healthPort),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metricsPort),
	}
	args = append(args, "--feature-gates="+cfg.EffectiveFeatureGates(), "--mcs-lb-pool="+MCSLoadBalancerPool,
		"--multicluster-provider=local", "--provider-ingress-class="+LocalIngressController)
	// --controllers is a list flag: a second one would add to this one
	// rather than replace it, so an explicit one is left alone.
	if !slices.ContainsFunc(cfg.ControllerManagerArgs, func(a string) bool { return strings.HasPrefix(a, "--controllers") }) {
		args = append(args, "--controllers="+FlotillaControllers)
	}
	return Component{
		Name: name, Cluster: ControlPlaneName, Kind: KindFlotillaControllerManager,
		// Extra flags last, so that they win.
		Args:       append(args, cfg.ControllerManagerArgs...),
		LogFile:    filepath.Join(p.LogDir(), name+".log"),
		HealthURL:  fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort),
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
	}
}

// agent is the `flotilla agent` of Pull-mode member m.
func (p *Plan) agent(m *ClusterPlan, healthPort, metricsPort int) Component {
	return Component{Name: m.Name + "/" + KindAgent, Cluster: m.Name, Kind: KindAgent,
		Args: []string{"agent", "--cluster-name=" + m.Name, "--kubeconfig=" + m.Kubeconfig,
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", healthPort),
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metricsPort),
			"--feature-gates=" + p.FeatureGates},
		LogFile:    filepath.Join(p.LogDir(), m.Name+"-"+KindAgent+".log"),
		HealthURL:  fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort),
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
	}
}

func (p *Plan) cluster(name string, member *MemberConfig, ports PortAllocator) (*ClusterPlan, error) {
	c := &ClusterPlan{Name: name, Member: member, Dir: filepath.Join(p.DataDir, "clusters", name)}
	c.Kubeconfig = filepath.Join(c.Dir, "admin.kubeconfig")
	port := func(what string) (int, error) { return ports.Port(name + "/" + what) }
	var err error
	if c.APIServerPort, err = port(KindAPIServer); err != nil {
		return nil, err
	}
	if c.Light() {
		// Its API server runs in Plan.LightMembers, on the shared etcd.
		return c, nil
	}
	if c.EtcdPorts[0], err = port("etcd-client"); err != nil {
		return nil, err
	}
	if c.EtcdPorts[1], err = port("etcd-peer"); err != nil {
		return nil, err
	}
	kcmPort, err := port(KindControllerManager)
	if err != nil {
		return nil, err
	}
	c.Components = append(c.Components, p.apiserver(c), p.controllerManager(c, kcmPort))
	if member != nil && !member.Bare {
		schedPort, err := port(KindScheduler)
		if err != nil {
			return nil, err
		}
		if c.KwokPort, err = port(KindKwok); err != nil {
			return nil, err
		}
		if c.ResourceMetricsPort, err = port("metrics-server"); err != nil {
			return nil, err
		}
		if c.CustomMetricsPort, err = port("custom-metrics"); err != nil {
			return nil, err
		}
		c.Components = append(c.Components, p.scheduler(c, schedPort), p.kwok(c), p.metrics(c))
	}
	return c, nil
}

func (p *Plan) component(c *ClusterPlan, kind, health string, args ...string) Component {
	return Component{
		Name:      c.Name + "/" + kind,
		Cluster:   c.Name,
		Kind:      kind,
		Args:      append([]string{"component", kind}, args...),
		LogFile:   filepath.Join(p.LogDir(), c.Name+"-"+kind+".log"),
		HealthURL: health,
	}
}

func (p *Plan) apiserver(c *ClusterPlan) Component {
	// The control plane claims new templates at admission (package
	// claim; members have no policies) and is tuned for latency.
	flotillaArgs := []string{
		"--etcd-name=" + c.Name,
		"--etcd-data-dir=" + filepath.Join(c.Dir, "etcd"),
		fmt.Sprintf("--etcd-client-port=%d", c.EtcdPorts[0]),
		fmt.Sprintf("--etcd-peer-port=%d", c.EtcdPorts[1]),
		"--etcd-log-file=" + filepath.Join(p.LogDir(), c.Name+"-etcd.log"),
	}
	if c.Name == ControlPlaneName {
		flotillaArgs = append(flotillaArgs, "--control-plane")
	}
	return p.component(c, KindAPIServer, c.Server()+"/readyz", append(append(flotillaArgs, "--"), p.apiserverArgs(c, c.EtcdPorts[0])...)...)
}

// apiserverArgs are the kube-apiserver flags of cluster c, on the etcd at
// etcdPort.
func (p *Plan) apiserverArgs(c *ClusterPlan, etcdPort int) []string {
	saKey, saPub := p.PKI.ServiceAccountKeys(c.Name)
	apiserverArgs := []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdPort),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.APIServerPort),
		"--tls-cert-file=" + p.PKI.ServingCert,
		"--tls-private-key-file=" + p.PKI.ServingKey,
		"--client-ca-file=" + p.PKI.CACert,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=RBAC",
		// The stack's API servers all listen on loopback, which Endpoints
		// may not hold; nothing inside a simulated cluster dials the
		// kubernetes Service anyway.
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		// /debug/pprof is served to admins (RBAC applies), for diagnosis.
		"--profiling=true",
		// CBOR (KEP-4222) as well as JSON: Flotilla's clients read in CBOR,
		// several times cheaper to encode and decode (see wirecodec).
		"--feature-gates=" + APIServerFeatureGates,
	}
	if c.Member == nil || !c.Member.Bare {
		// Front-proxy: the API server forwards requests to the metrics
		// APIServices with this client certificate and the user in headers.
		apiserverArgs = append(apiserverArgs,
			"--requestheader-client-ca-file="+p.PKI.FrontProxyCACert,
			"--requestheader-allowed-names="+FrontProxyClientName,
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--proxy-client-cert-file="+p.PKI.FrontProxyCert,
			"--proxy-client-key-file="+p.PKI.FrontProxyKey,
		)
	}
	if c.Name == ControlPlaneName {
		// Objects there are templates for members: see ControlPlaneAdmission.
		disabled := ControlPlaneDisabledAdmissionPlugins()
		if p.NoAdmissionClaim {
			disabled = append(disabled, AdmissionClaimPlugin)
		}
		apiserverArgs = append(apiserverArgs, "--disable-admission-plugins="+strings.Join(disabled, ","),
			// Pull-mode members register with bootstrap tokens.
			"--enable-bootstrap-token-auth=true")
	}
	return apiserverArgs
}

// lightMembers lays out Plan.LightMembers for the light members, if any:
// one etcd for all, each member's data under its own key prefix
// (LightMemberEtcdPrefix), and the API server flags that keep an idle
// member cheap.
func (p *Plan) lightMembers(ports PortAllocator) error {
	var light []*ClusterPlan
	for _, m := range p.Members() {
		if m.Light() {
			light = append(light, m)
		}
	}
	if len(light) == 0 {
		return nil
	}
	port := func(what string) (int, error) { return ports.Port(LightMembersName + "/" + what) }
	var etcd [2]int
	var err error
	if etcd[0], err = port("etcd-client"); err != nil {
		return err
	}
	if etcd[1], err = port("etcd-peer"); err != nil {
		return err
	}
	health, err := port("health")
	if err != nil {
		return err
	}
	dir := filepath.Join(p.DataDir, "clusters", LightMembersName)
	args := []string{"component", KindLightMembers,
		"--etcd-name=" + LightMembersName,
		"--etcd-data-dir=" + filepath.Join(dir, "etcd"),
		fmt.Sprintf("--etcd-client-port=%d", etcd[0]),
		fmt.Sprintf("--etcd-peer-port=%d", etcd[1]),
		"--etcd-log-file=" + filepath.Join(p.LogDir(), LightMembersName+"-etcd.log"),
		fmt.Sprintf("--health-port=%d", health),
		"--tls-cert-file=" + p.PKI.ServingCert,
		"--tls-private-key-file=" + p.PKI.ServingKey,
		"--client-ca-file=" + p.PKI.CACert,
	}
	for i, m := range light {
		m.EtcdPorts = etcd
		args = append(append(args, "--", m.Name), p.apiserverArgs(m, etcd[0])...)
		args = append(args, LightMemberAPIServerArgs(m.Name, i == 0)...)
	}
	p.LightMembers = Component{Name: LightMembersName, Cluster: LightMembersName, Kind: KindLightMembers, Args: args,
		LogFile:   filepath.Join(p.LogDir(), LightMembersName+".log"),
		HealthURL: fmt.Sprintf("https://127.0.0.1:%d/readyz", health)}
	return nil
}

// LightMemberEtcdPrefix is where light member name keeps its objects in
// the shared etcd (kube-apiserver's --etcd-prefix).
func LightMemberEtcdPrefix(name string) string { return "/members/" + name + "/registry" }

// LightMemberDisabledAPIs are the API groups a light member does not serve:
// API priority and fairness (off), dynamic resource allocation and storage
// migration, which nothing propagates to a member without nodes.
var LightMemberDisabledAPIs = []string{"flowcontrol.apiserver.k8s.io/v1", "resource.k8s.io/v1", "storagemigration.k8s.io/v1"}

// LightMemberAPIServerArgs are the kube-apiserver flags that make a light
// member cheap at rest: its own etcd prefix; no per-resource object counts
// or database size polled from etcd (a hundred members would poll the
// shared etcd thousands of times a minute for metrics nobody reads); etcd
// compaction by the first member only (it compacts the whole etcd); no API
// priority and fairness, whose configuration controller and dispatchers
// run on every server and matter only for a server under contention. The
// watch cache stays on: without it every client watch is an etcd watch,
// and each one (re)started from an old revision makes the shared etcd
// read and decode every write of every member since that revision; after
// a burst of propagation that kept the host at a full core for minutes.
func LightMemberAPIServerArgs(name string, first bool) []string {
	args := []string{"--etcd-prefix=" + LightMemberEtcdPrefix(name),
		"--etcd-count-metric-poll-period=0",
		"--etcd-db-metric-poll-interval=0",
		"--enable-priority-and-fairness=false",
		"--runtime-config=" + strings.Join(LightMemberDisabledAPIs, "=false,") + "=false",
	}
	if !first {
		args = append(args, "--etcd-compaction-interval=0")
	}
	return args
}

func (p *Plan) controllerManager(c *ClusterPlan, port int) Component {
	saKey, _ := p.PKI.ServiceAccountKeys(c.Name)
	controllers := "*"
	if c.Member == nil || c.Member.Bare {
		controllers = strings.Join(ControlPlaneControllers, ",")
	}
	return p.component(c, KindControllerManager, fmt.Sprintf("https://127.0.0.1:%d/healthz", port),
		"--kubeconfig="+c.Kubeconfig,
		"--authentication-kubeconfig="+c.Kubeconfig,
		"--authorization-kubeconfig="+c.Kubeconfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file="+p.PKI.ServingCert,
		"--tls-private-key-file="+p.PKI.ServingKey,
		"--leader-elect=false",
		"--controllers="+controllers,
		"--service-account-private-key-file="+saKey,
		"--root-ca-file="+p.PKI.CACert,
		"--cluster-signing-cert-file="+p.PKI.CACert,
		"--cluster-signing-key-file="+p.PKI.CAKey,
		// The default client rate (20 requests/s) lets a member's
		// deployment controller handle about 4 Deployments a second, so
		// a propagated burst would wait minutes for its member status.
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
	)
}

func (p *Plan) scheduler(c *ClusterPlan, port int) Component {
	return p.component(c, KindScheduler, fmt.Sprintf("https://127.0.0.1:%d/healthz", port),
		"--kubeconfig="+c.Kubeconfig,
		"--authentication-kubeconfig="+c.Kubeconfig,
		"--authorization-kubeconfig="+c.Kubeconfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file="+p.PKI.ServingCert,
		"--tls-private-key-file="+p.PKI.ServingKey,
		"--leader-elect=false",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
	)
}

// APIServerFeatureGates are the Kubernetes gates the stack's API servers get:
// CBOR serving (KEP-4222), which Flotilla's clients read in (see wirecodec);
// and no watch-cache consistency checker (DetectCacheInconsistency, on by
// default since Kubernetes 1.34): every 5 to 7.5 minutes it reads each
// resource whole from etcd and decodes it to compare with the watch cache,
// which at 30,000 templates (90,000 Works) keeps the control plane's API
// server busy for tens of seconds at a time, whatever else is running. The
// check looks for bugs in the API server's cache, not in what it serves.
const APIServerFeatureGates = "CBORServingAndStorage=true,DetectCacheInconsistency=false"

// KwokNodeAnnotation marks the nodes kwok simulates; `up` creates the nodes
// with it and kwok manages exactly those.
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

func (p *Plan) kwok(c *ClusterPlan) Component {
	return p.component(c, KindKwok, "",
		"--kubeconfig="+c.Kubeconfig,
		"--config="+p.KwokConfig,
		"--manage-nodes-with-annotation-selector="+KwokNodeAnnotation+"=fake",
		// A /16 leaves room for tens of thousands of simulated pods.
		"--cidr=10.0.0.0/16",
		"--node-lease-duration-seconds=40",
		// One loopback server for all the member's nodes, on a port of its
		// own: nodes get InternalIP 127.0.0.1 and this port as their kubelet
		// port, which is where metrics-server scrapes them.
		"--node-ip=127.0.0.1",
		fmt.Sprintf("--node-port=%d", c.KwokPort),
		fmt.Sprintf("--server-address=127.0.0.1:%d", c.KwokPort),
		"--enable-crds="+strings.Join(KwokCRDKinds, ","),
	)
}

// MetricResolution is how often each member's metrics-server scrapes kwok;
// short, so that CPU (which needs two scrapes) shows within seconds.
const MetricResolution = "5s"

func (p *Plan) metrics(c *ClusterPlan) Component {
	return p.component(c, KindMetrics, fmt.Sprintf("https://127.0.0.1:%d/healthz", c.ResourceMetricsPort),
		"--kubeconfig="+c.Kubeconfig,
		"--tls-cert-file="+p.PKI.ServingCert,
		"--tls-private-key-file="+p.PKI.ServingKey,
		fmt.Sprintf("--resource-metrics-port=%d", c.ResourceMetricsPort),
		fmt.Sprintf("--custom-metrics-port=%d", c.CustomMetricsPort),
		"--metric-resolution="+MetricResolution,
	)
}

// WriteDryRun prints the plan: every cluster, component, port, flag and path.
// The output is stable for a given config and port allocator.
func (p *Plan) WriteDryRun(w io.Writer) {
	fmt.Fprintf(w, "Plan for the local stack (dry run: nothing is started)\n")
	fmt.Fprintf(w, "data dir:   %s\n", p.DataDir)
	fmt.Fprintf(w, "CA:         %s\n", p.PKI.CACert)
	fmt.Fprintf(w, "kubeconfig: %s (context %s)\n", p.KarmadaKubeconfig(), ControlPlaneContext)
	fmt.Fprintf(w, "kubeconfig: %s (contexts", p.MembersKubeconfig())
	for _, m := range p.Members() {
		fmt.Fprintf(w, " %s", m.Name)
	}
	fmt.Fprintf(w, ")\n")
	writeComponent := func(comp Component, indent string) {
		fmt.Fprintf(w, "%s%s\n", indent, comp.Kind)
		if comp.HealthURL != "" {
			fmt.Fprintf(w, "%s  health: %s\n", indent, comp.HealthURL)
		}
		if comp.MetricsURL != "" {
			fmt.Fprintf(w, "%s  metrics: %s\n", indent, comp.MetricsURL)
		}
		fmt.Fprintf(w, "%s  log:    %s\n", indent, comp.LogFile)
		n := 1
		if comp.Args[0] == "component" {
			n = 2
		}
		fmt.Fprintf(w, "%s  run:    flotilla %s\n", indent, strings.Join(comp.Args[:n], " "))
		for _, a := range comp.Args[n:] {
			fmt.Fprintf(w, "%s            %s\n", indent, a)
		}
	}
	if p.LightMembers.Kind != "" {
		fmt.Fprintf(w, "\nlight members' host (every light member's API server, one etcd):\n")
		writeComponent(p.LightMembers, "  ")
	}
	for _, c := range p.Clusters {
		fmt.Fprintf(w, "\ncluster %s: %s\n", c.Name, c.Server())
		if c.Light() {
			m := c.Member
			fmt.Fprintf(w, "  light: API server in %s, etcd 127.0.0.1:%d prefix %s, no nodes; provider %s, region %s, zone %s\n",
				LightMembersName, c.EtcdPorts[0], LightMemberEtcdPrefix(c.Name), m.Provider, m.Region, m.Zone)
			continue
		}
		fmt.Fprintf(w, "  etcd: client 127.0.0.1:%d, peer 127.0.0.1:%d, data %s\n", c.EtcdPorts[0], c.EtcdPorts[1], filepath.Join(c.Dir, "etcd"))
		if m := c.Member; m != nil && m.Bare {
			fmt.Fprintf(w, "  bare: API server only, no nodes; provider %s, region %s, zone %s\n", m.Provider, m.Region, m.Zone)
		} else if m != nil {
			fmt.Fprintf(w, "  nodes: %d x (cpu %s, memory %s, pods %s); provider %s, region %s, zone %s\n",
				m.Nodes, m.CPU, m.Memory, m.Pods, m.Provider, m.Region, m.Zone)
		}
		for _, comp := range c.Components {
			writeComponent(comp, "  ")
		}
		for _, a := range AggregatedAPIs(c) {
			fmt.Fprintf(w, "  APIService %s: Service %s/%s (ExternalName 127.0.0.1), port %d\n", a.Name(), a.Namespace, a.Service, a.Port)
		}
	}
	fmt.Fprintf(w, "\nafter the Karmada CRDs are installed and the members joined:\n")
	if p.MetricsAdapter.Kind != "" {
		writeComponent(p.MetricsAdapter, "  ")
	}
	writeComponent(p.Search, "  ")
	writeComponent(p.ControllerManager, "  ")
	for _, c := range p.StandbyControllerManagers {
		writeComponent(c, "  ")
	}
	for _, m := range p.Members() {
		if m.Agent.Kind != "" {
			fmt.Fprintf(w, "\nafter the controller manager, %s registers in Pull mode (bootstrap token, CSR) and runs:\n", m.Name)
			writeComponent(m.Agent, "  ")
		}
	}
	fmt.Fprintf(w, "\nonce every Cluster is Ready, the dashboard (%s):\n", p.DashboardURL())
	writeComponent(p.Dashboard, "  ")
}
