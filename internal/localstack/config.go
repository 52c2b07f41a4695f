// Package localstack implements `flotilla up`: a Karmada-style control plane
// (kube-apiserver on embedded etcd plus a trimmed kube-controller-manager) and
// N simulated member clusters (kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok), all as child processes of the flotilla binary,
// listening on loopback with a per-stack CA and RBAC.
package localstack

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// Config is the shape of the whole local stack. It is built from flags and,
// optionally, a YAML file (see LoadConfigFile).
type Config struct {
	// DataDir holds certificates, kubeconfigs, etcd data, logs and the
	// recorded ports. Default ~/.flotilla.
	DataDir string `json:"-"`
	// Members are the simulated member clusters, in order.
	Members []MemberConfig `json:"members"`
	// ControllerManagerArgs are extra flags for `flotilla controller-manager`.
	ControllerManagerArgs []string `json:"controllerManagerArgs,omitempty"`
	// ControllerManagerReplicas is how many `flotilla controller-manager`
	// processes run (default 1). With more than one they elect a leader on
	// the Lease karmada-system/flotilla-controller-manager; the others stand
	// by, caches warm, and take over within the lease duration.
	ControllerManagerReplicas int `json:"controllerManagerReplicas,omitempty"`
	// NoAdmissionClaim turns off the control plane's FlotillaPolicyClaim
	// admission plugin (the admission-claim fast path, see
	// docs/architecture.md): templates are then claimed by the detector
	// alone.
	NoAdmissionClaim bool `json:"noAdmissionClaim,omitempty"`
	// FeatureGates is a --feature-gates value ("PropagationPolicyPreemption=true,...", see
	// package features) passed to every Flotilla component the stack starts: today the
	// controller manager, which runs the scheduler in-process. Empty leaves every gate at
	// its default.
	FeatureGates string `json:"featureGates,omitempty"`
}

// StackFeatureGates are the gates the local stack turns on by default, ahead
// of Config.FeatureGates (which can turn them off again): Karmada's alpha
// MultiClusterService, so the seed's MultiClusterService examples act.
const StackFeatureGates = "MultiClusterService=true"

// MCSLoadBalancerPool is the address pool of the local stack's load
// balancer provider (--mcs-lb-pool): addresses outside the members' pod
// (10.0.0.0/16) and service ranges. Nothing forwards traffic to them.
const MCSLoadBalancerPool = "10.255.0.0/24"

// The local stack's MultiClusterIngress provider: the controller manager
// runs the built-in one (--multicluster-provider=local) for IngressClasses
// whose spec.controller is LocalIngressController, and the stack makes
// LocalIngressClass, such a class, the control plane's default, so that a
// MultiClusterIngress without spec.ingressClassName is served.
const (
	LocalIngressClass      = "flotilla-local"
	LocalIngressController = "flotilla.io/local"
	// MCILoadBalancerPool and MCILoadBalancerPort are where its listeners
	// listen (the controller manager's defaults, --mci-lb-pool and
	// --mci-lb-port; --controller-manager-arg changes them).
	MCILoadBalancerPool = "127.0.1.0/24"
	MCILoadBalancerPort = 18080
)

// EffectiveFeatureGates is the --feature-gates value the stack's components
// get: StackFeatureGates, then FeatureGates (later settings win).
func (c *Config) EffectiveFeatureGates() string {
	if c.FeatureGates == "" {
		return StackFeatureGates
	}
	return StackFeatureGates + "," + c.FeatureGates
}

// MemberConfig is one simulated member cluster.
type MemberConfig struct {
	// Name is the cluster name, a DNS label such as "member1". It becomes the
	// kubeconfig context in members.config and, later, the Cluster object name.
	Name string `json:"name"`
	// Bare members run only kube-apiserver and the kube-controller-manager
	// controllers every cluster needs (namespaces, garbage collection,
	// service-account tokens): no nodes, scheduler or workload controllers.
	// Propagated objects are stored but nothing rolls out, so their status
	// stays empty. Much lighter; meant for scale tests of propagation
	// (Karmada's published propagation benchmarks use such members).
	Bare bool `json:"bare,omitempty"`
	// Light members are bare members hosted together, for fleets of tens
	// to a hundred members on one machine: every light member's
	// kube-apiserver runs in one process on one etcd, each under its own
	// key prefix, with only the namespace, service-account token and
	// ClusterRole aggregation controllers (no garbage collector). Each is
	// still a real API server on its own port; kubectl works against it.
	// Light implies Bare.
	Light bool `json:"light,omitempty"`
	// Nodes is how many kwok nodes the member has. Default 3; 0 when Bare.
	Nodes int `json:"nodes,omitempty"`
	// CPU, Memory and Pods are each node's capacity and allocatable, as
	// Kubernetes quantities. Defaults 8, 32Gi and 110.
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
	Pods   string `json:"pods,omitempty"`
	// Provider, Region and Zone are the member's topology. They label its
	// nodes (topology.kubernetes.io/region and /zone, flotilla.io/provider)
	// and feed the Cluster's spec.provider, spec.region and spec.zone.
	Provider string `json:"provider,omitempty"`
	Region   string `json:"region,omitempty"`
	Zone     string `json:"zone,omitempty"`
	// Pull runs the member in Pull mode, as Karmada's karmadactl register
	// would: it registers with a bootstrap token and runs a `flotilla
	// agent` beside it, and the control plane never writes to it. Its
	// Cluster shows syncMode: Pull.
	Pull bool `json:"pull,omitempty"`
}

// Defaults used for members and nodes when neither a flag nor the config
// file sets a value.
const (
	DefaultMembers        = 3
	DefaultNodesPerMember = 3
	DefaultNodeCPU        = "8"
	DefaultNodeMemory     = "32Gi"
	DefaultNodePods       = "110"
	DefaultProvider       = "kwok"
)

// NodeDefaults are the per-node values applied to members that leave them
// empty; flags fill it.
type NodeDefaults struct {
	Nodes             int
	CPU, Memory, Pods string
}

// DefaultMember returns member i (1-based) with default topology: members
// pair up into regions (member1 and member2 in region-1, member3 and member4
// in region-2, ...) and each has its own zone, so placement by region and by
// zone can both be exercised.
func DefaultMember(i int, d NodeDefaults) MemberConfig {
	region := (i + 1) / 2
	zoneLetter := string(rune('a' + (i+1)%2))
	return MemberConfig{
		Name:     fmt.Sprintf("member%d", i),
		Nodes:    d.Nodes,
		CPU:      d.CPU,
		Memory:   d.Memory,
		Pods:     d.Pods,
		Provider: DefaultProvider,
		Region:   fmt.Sprintf("region-%d", region),
		Zone:     fmt.Sprintf("zone-%d%s", region, zoneLetter),
	}
}

// LoadConfigFile reads a YAML stack config such as:
//
//	members:
//	- name: member1
//	  nodes: 5
//	  cpu: "16"
//	  region: eu-west
//	  zone: eu-west-1
//
// Unknown fields are an error. Empty fields are filled by Complete.
func LoadConfigFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read stack config: %w", err)
	}
	c := &Config{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		// sigs.k8s.io/yaml reports through its JSON decoder; say YAML.
		msg := strings.ReplaceAll(err.Error(), "error unmarshaling JSON: while decoding JSON: ", "")
		return nil, fmt.Errorf("stack config %s is not valid: %s (the format is in the README, under 'Sizing members')", path, msg)
	}
	// An explicit "nodes: 0" would otherwise read as unset and get the
	// default; a member without nodes is spelled "bare: true".
	var raw struct {
		Members []map[string]any `json:"members"`
	}
	if err := yaml.Unmarshal(data, &raw); err == nil {
		for i, m := range raw.Members {
			if n, ok := m["nodes"].(float64); ok && n == 0 && m["bare"] != true {
				return nil, fmt.Errorf("stack config %s: members[%d] has nodes: 0; a member needs at least 1 node, or bare: true for one that runs only an API server", path, i)
			}
		}
	}
	return c, nil
}

// Complete fills empty member fields from d and the topology defaults.
func (c *Config) Complete(d NodeDefaults) {
	for i := range c.Members {
		m := &c.Members[i]
		m.Bare = m.Bare || m.Light
		def := DefaultMember(i+1, d)
		orDefault(&m.Name, def.Name)
		if !m.Bare { // a bare member has no nodes to size
			orDefault(&m.Nodes, def.Nodes)
			orDefault(&m.CPU, def.CPU)
			orDefault(&m.Memory, def.Memory)
			orDefault(&m.Pods, def.Pods)
		}
		orDefault(&m.Provider, def.Provider)
		orDefault(&m.Region, def.Region)
		orDefault(&m.Zone, def.Zone)
	}
	if c.DataDir != "" {
		c.DataDir = filepath.Clean(c.DataDir)
	}
}

// orDefault sets *v to def when *v is the zero value.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Validate reports the first problem with the config, naming the member and
// field: names must be unique DNS labels, node counts 1..1000, quantities
// parseable, and the data dir set.
func (c *Config) Validate() error {
	if c.DataDir == "" {
		return fmt.Errorf("--data-dir must not be empty")
	}
	if len(c.Members) == 0 {
		return fmt.Errorf("at least one member cluster is needed (--members 1 or more)")
	}
	seen := map[string]bool{}
	for i, m := range c.Members {
		where := fmt.Sprintf("members[%d] (%s)", i, m.Name)
		if len(m.Name) > 48 || !dnsLabel.MatchString(m.Name) {
			return fmt.Errorf("%s: name must be a lowercase DNS label of at most 48 characters", where)
		}
		if m.Name == ControlPlaneName {
			return fmt.Errorf("%s: name %q is reserved for the control plane", where, m.Name)
		}
		if seen[m.Name] {
			return fmt.Errorf("%s: name is used twice", where)
		}
		seen[m.Name] = true
		if m.Bare {
			if m.Nodes != 0 || m.CPU != "" || m.Memory != "" || m.Pods != "" {
				return fmt.Errorf("%s: a bare member has no nodes; remove nodes, cpu, memory and pods (or bare)", where)
			}
			continue
		}
		if m.Nodes < 1 || m.Nodes > 1000 {
			return fmt.Errorf("%s: nodes must be between 1 and 1000, got %d", where, m.Nodes)
		}
		for field, q := range map[string]string{"cpu": m.CPU, "memory": m.Memory, "pods": m.Pods} {
			if _, err := resource.ParseQuantity(q); err != nil {
				return fmt.Errorf("%s: %s %q is not a Kubernetes quantity: %w", where, field, q, err)
			}
		}
	}
	return nil
}
