package localstack

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func goldenPlan(t *testing.T) *Plan {
	t.Helper()
	c := &Config{DataDir: "/data", Members: []MemberConfig{DefaultMember(1, defaults), DefaultMember(2, defaults)}}
	c.Complete(defaults)
	p, err := BuildPlan(c, &SequentialPorts{Next: 31000})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDryRunMatchesGolden(t *testing.T) {
	var buf bytes.Buffer
	goldenPlan(t).WriteDryRun(&buf)
	path := filepath.Join("testdata", "dryrun.golden")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/localstack -run DryRun -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("dry-run output differs from %s (-want +got):\n%s", path, diff)
	}
}

func TestControlPlaneRunsOnlyKarmadaControllers(t *testing.T) {
	p := goldenPlan(t)
	cp := p.ControlPlane()
	kinds := []string{}
	for _, c := range cp.Components {
		kinds = append(kinds, c.Kind)
		if c.Kind == KindControllerManager {
			want := "--controllers=namespace-controller,garbage-collector-controller,serviceaccount-token-controller,clusterrole-aggregation-controller," +
				"bootstrap-signer-controller,token-cleaner-controller,certificatesigningrequest-signing-controller,certificatesigningrequest-cleaner-controller"
			if !contains(c.Args, want) {
				t.Errorf("control plane kube-controller-manager args lack %s: %v", want, c.Args)
			}
		}
	}
	if diff := cmp.Diff([]string{KindAPIServer, KindControllerManager}, kinds); diff != "" {
		t.Errorf("control plane components (-want +got):\n%s", diff)
	}
	for _, m := range p.Members() {
		kinds = kinds[:0]
		for _, c := range m.Components {
			kinds = append(kinds, c.Kind)
		}
		if diff := cmp.Diff([]string{KindAPIServer, KindControllerManager, KindScheduler, KindKwok, KindMetrics}, kinds); diff != "" {
			t.Errorf("%s components (-want +got):\n%s", m.Name, diff)
		}
	}
}

func TestBareMemberRunsOnlyItsAPIServer(t *testing.T) {
	sized := &Config{DataDir: "/data", Members: []MemberConfig{{Name: "member1", Bare: true, Nodes: 4}}}
	sized.Complete(defaults)
	if err := sized.Validate(); err == nil || !strings.Contains(err.Error(), "a bare member has no nodes") {
		t.Errorf("a bare member with nodes: got %v, want an error saying it has none", err)
	}
	c := &Config{DataDir: "/data", Members: []MemberConfig{{Name: "member1", Bare: true}}}
	c.Complete(defaults)
	if err := c.Validate(); err != nil {
		t.Fatalf("a bare member is valid: %v", err)
	}
	if c.Members[0].Nodes != 0 {
		t.Errorf("a bare member has no nodes, got %d", c.Members[0].Nodes)
	}
	p, err := BuildPlan(c, &SequentialPorts{Next: 31000})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, comp := range p.Members()[0].Components {
		kinds = append(kinds, comp.Kind)
		if comp.Kind == KindControllerManager && !contains(comp.Args, "--controllers="+strings.Join(ControlPlaneControllers, ",")) {
			t.Errorf("a bare member's kube-controller-manager runs workload controllers: %v", comp.Args)
		}
	}
	if diff := cmp.Diff([]string{KindAPIServer, KindControllerManager}, kinds); diff != "" {
		t.Errorf("bare member components (-want +got):\n%s", diff)
	}
	if p.MetricsAdapter.Kind != "" {
		t.Errorf("a stack of bare members runs a metrics adapter: %+v", p.MetricsAdapter)
	}
	// The search server runs whatever the members.
	if apis := AggregatedAPIs(p.ControlPlane()); len(apis) != 1 || apis[0].Name() != "v1alpha1.search.karmada.io" || p.Search.Kind != KindSearch {
		t.Errorf("a stack of bare members: control plane APIServices %+v, search server %+v; want only search.karmada.io", apis, p.Search)
	}
}

func TestEachSimulatedMemberHasItsOwnMetricsPorts(t *testing.T) {
	p := goldenPlan(t)
	seen := map[int]string{}
	for _, m := range p.Members() {
		for what, port := range map[string]int{"kwok": m.KwokPort, "metrics-server": m.ResourceMetricsPort, "custom-metrics": m.CustomMetricsPort} {
			if port == 0 {
				t.Errorf("%s has no %s port", m.Name, what)
			}
			if other, dup := seen[port]; dup {
				t.Errorf("%s %s shares port %d with %s", m.Name, what, port, other)
			}
			seen[port] = m.Name + " " + what
		}
		var kwokArgs []string
		for _, comp := range m.Components {
			if comp.Kind == KindKwok {
				kwokArgs = comp.Args
			}
		}
		for _, want := range []string{"--node-ip=127.0.0.1", fmt.Sprintf("--node-port=%d", m.KwokPort), "--enable-crds=Metric,ResourceUsage,ClusterResourceUsage"} {
			if !contains(kwokArgs, want) {
				t.Errorf("%s kwok lacks %s: %v", m.Name, want, kwokArgs)
			}
		}
		var groups []string
		for _, a := range AggregatedAPIs(m) {
			groups = append(groups, a.Name())
		}
		want := []string{"v1beta1.metrics.k8s.io", "v1beta1.custom.metrics.k8s.io", "v1beta2.custom.metrics.k8s.io", "v1beta1.external.metrics.k8s.io"}
		if diff := cmp.Diff(want, groups); diff != "" {
			t.Errorf("%s APIServices (-want +got):\n%s", m.Name, diff)
		}
	}
	cp := p.ControlPlane()
	for _, a := range AggregatedAPIs(cp) {
		if a.Group == "search.karmada.io" {
			if a.Service != SearchService || a.Port != cp.SearchPort || a.Port == 0 || seen[a.Port] != "" {
				t.Errorf("control plane APIService %s is not the search server's: %+v", a.Name(), a)
			}
			continue
		}
		if a.Service != MetricsAdapterService || a.Namespace != MetricsAdapterNamespace || a.Port != cp.MetricsAdapterPort || a.Port == 0 {
			t.Errorf("control plane APIService %s is not the metrics adapter's: %+v", a.Name(), a)
		}
	}
	if len(AggregatedAPIs(cp)) != 5 || p.MetricsAdapter.Kind != KindMetricsAdapter {
		t.Errorf("the control plane has no metrics adapter: %v, %+v", AggregatedAPIs(cp), p.MetricsAdapter)
	}
}

func TestSimulatedNodesPointMetricsServerAtKwok(t *testing.T) {
	m := DefaultMember(1, defaults)
	for _, n := range DesiredNodes(&m) {
		if got, want := n.Annotations[ResourceMetricsPathAnnotation], "/metrics/nodes/"+n.Name+"/metrics/resource"; got != want {
			t.Errorf("node %s: %s=%q, want %q", n.Name, ResourceMetricsPathAnnotation, got, want)
		}
	}
}

func TestEveryPortIsDistinctAndLoopback(t *testing.T) {
	p := goldenPlan(t)
	seen := map[string]string{}
	for _, c := range p.Components() {
		for _, a := range c.Args {
			if strings.HasPrefix(a, "--bind-address=") && a != "--bind-address=127.0.0.1" {
				t.Errorf("%s binds %s, want loopback", c.Name, a)
			}
			if strings.HasPrefix(a, "--secure-port=") {
				if other, dup := seen[a]; dup {
					t.Errorf("%s and %s share %s", other, c.Name, a)
				}
				seen[a] = c.Name
			}
		}
	}
}

func contains(args []string, want string) bool {
	for _, a := range args {
		if a == want {
			return true
		}
	}
	return false
}

func TestFlotillaComponentsServeMetricsAndProbesOnPortsOfTheirOwn(t *testing.T) {
	c := &Config{DataDir: "/data", Members: []MemberConfig{DefaultMember(1, defaults), DefaultMember(2, defaults), DefaultMember(3, defaults)}}
	c.Members[1].Pull, c.Members[2].Pull = true, true
	c.Complete(defaults)
	ports := &SequentialPorts{Next: 31000}
	p, err := BuildPlan(c, ports)
	if err != nil {
		t.Fatal(err)
	}
	flotilla := []Component{p.ControllerManager, p.Members()[1].Agent, p.Members()[2].Agent}
	seen := map[int]string{}
	for key, port := range ports.chosen {
		seen[port] = key
	}
	if len(seen) != len(ports.chosen) {
		t.Errorf("ports handed out twice: %v", ports.chosen)
	}
	for _, comp := range flotilla {
		health, metrics := flagPort(t, comp, "--health-probe-bind-address"), flagPort(t, comp, "--metrics-bind-address")
		if health == metrics {
			t.Errorf("%s probes and metrics share port %d", comp.Name, health)
		}
		if want := fmt.Sprintf("http://127.0.0.1:%d/readyz", health); comp.HealthURL != want {
			t.Errorf("%s HealthURL = %q, want %q", comp.Name, comp.HealthURL, want)
		}
		if want := fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics); comp.MetricsURL != want {
			t.Errorf("%s MetricsURL = %q, want %q", comp.Name, comp.MetricsURL, want)
		}
	}
	want := map[string]string{
		ControllerManagerHealthPort: p.ControllerManager.HealthURL, ControllerManagerMetricsPort: p.ControllerManager.MetricsURL,
		AgentHealthPort("member2"): p.Members()[1].Agent.HealthURL, AgentMetricsPort("member2"): p.Members()[1].Agent.MetricsURL,
		AgentHealthPort("member3"): p.Members()[2].Agent.HealthURL, AgentMetricsPort("member3"): p.Members()[2].Agent.MetricsURL,
	}
	for key, url := range want {
		if port, ok := ports.chosen[key]; !ok || !strings.Contains(url, fmt.Sprintf(":%d/", port)) {
			t.Errorf("ports.json key %s (port %d, recorded %v) is not the port of %s", key, port, ok, url)
		}
	}
	if p.Members()[0].Agent.Kind != "" || p.Members()[0].Agent.MetricsURL != "" {
		t.Errorf("a Push member has an agent: %+v", p.Members()[0].Agent)
	}
}

// flagPort returns the port of comp's flag, which must bind 127.0.0.1.
func flagPort(t *testing.T, comp Component, flag string) int {
	t.Helper()
	for _, a := range comp.Args {
		if v, ok := strings.CutPrefix(a, flag+"=127.0.0.1:"); ok {
			var port int
			if _, err := fmt.Sscan(v, &port); err != nil {
				t.Fatalf("%s %s: %v", comp.Name, a, err)
			}
			return port
		}
	}
	t.Fatalf("%s has no %s on 127.0.0.1: %v", comp.Name, flag, comp.Args)
	return 0
}

// TestLightMembersShareOneHost: light members get no processes of their
// own; one host serves each on its own port and its own etcd prefix, on
// one etcd, and only the first compacts it.
func TestLightMembersShareOneHost(t *testing.T) {
	c := &Config{DataDir: "/data"}
	for i := 1; i <= 3; i++ {
		m := DefaultMember(i, defaults)
		m.Light = true
		m.Nodes, m.CPU, m.Memory, m.Pods = 0, "", "", ""
		c.Members = append(c.Members, m)
	}
	c.Complete(defaults)
	if err := c.Validate(); err != nil {
		t.Fatalf("light members do not validate: %v", err)
	}
	p, err := BuildPlan(c, &SequentialPorts{Next: 31000})
	if err != nil {
		t.Fatal(err)
	}
	host := p.LightMembers
	if host.Kind != KindLightMembers || !strings.HasSuffix(host.HealthURL, "/readyz") {
		t.Fatalf("light members' host: %+v", host)
	}
	ports := map[int]bool{}
	for _, m := range p.Members() {
		if !m.Member.Bare || !m.Light() {
			t.Errorf("%s: light %v bare %v, want both", m.Name, m.Light(), m.Member.Bare)
		}
		if len(m.Components) != 0 {
			t.Errorf("%s runs processes of its own: %v", m.Name, m.Components)
		}
		if ports[m.APIServerPort] {
			t.Errorf("%s shares API server port %d", m.Name, m.APIServerPort)
		}
		ports[m.APIServerPort] = true
		if m.EtcdPorts != p.Members()[0].EtcdPorts {
			t.Errorf("%s uses etcd %v, member1 %v: want one etcd", m.Name, m.EtcdPorts, p.Members()[0].EtcdPorts)
		}
	}
	segments := strings.Split(strings.Join(host.Args, "\x00"), "\x00--\x00")
	if len(segments) != 4 {
		t.Fatalf("want the host's flags and 3 members, got %d segments: %q", len(segments), host.Args)
	}
	for i, seg := range segments[1:] {
		args := strings.Split(seg, "\x00")
		name := fmt.Sprintf("member%d", i+1)
		if args[0] != name {
			t.Errorf("segment %d names %q, want %s", i+1, args[0], name)
		}
		if !contains(args, "--etcd-prefix="+LightMemberEtcdPrefix(name)) || !contains(args, fmt.Sprintf("--secure-port=%d", p.Members()[i].APIServerPort)) {
			t.Errorf("%s: no own prefix or port in %q", name, args)
		}
		if compacts := !contains(args, "--etcd-compaction-interval=0"); compacts != (i == 0) {
			t.Errorf("%s compacts the shared etcd: %v (only member1 should)", name, compacts)
		}
	}
}
