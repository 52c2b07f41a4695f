package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/test/reftest"
)

// sharedDir is ../shared beside the repository (the seed and Karmada's samples); without it
// the test is skipped (and fails under CI).
func sharedDir(t *testing.T) string {
	t.Helper()
	return reftest.Shared(t)
}

// seedYAMLBlocks returns the YAML examples of the seed release notes.
func seedYAMLBlocks(t *testing.T) []string { return reftest.SeedYAMLBlocks(t) }

// apply runs kubectl apply -f - on the control plane and returns output and error.
func (s *stack) apply(yaml string, extra ...string) (string, error) {
	kc, ctx := s.kubeconfig("")
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kc, "--context", ctx, "apply", "-f", "-"}, extra...)...)
	cmd.Stdin = strings.NewReader(yaml)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestKarmadaAPICompatibility(t *testing.T) {
	s := sharedStackOf(t, 2)
	shared := sharedDir(t)

	t.Run("kubectl lists Karmada kinds by their short names", func(t *testing.T) {
		// kubectl fails on any short name it cannot resolve.
		out := s.kubectl("", "get", "pp,cpp,op,cop,rb,crb,works,fhpa,cronfhpa,mcs,clusters", "-A")
		if !strings.Contains(out, "cluster.cluster.karmada.io/member1") {
			t.Errorf("the joined member is not listed:\n%s", out)
		}
	})

	t.Run("every Karmada sample applies", func(t *testing.T) {
		for _, dir := range []string{"nginx", "guestbook"} {
			base := filepath.Join(shared, "reference", "karmada-samples", dir)
			files, _ := filepath.Glob(filepath.Join(base, "*.yaml"))
			// CRDs first, so instances of them can be applied next.
			crds, _ := filepath.Glob(filepath.Join(base, "*crd*.yaml"))
			for _, f := range crds {
				s.kubectl("", "apply", "-f", f)
			}
			// Polled rather than `kubectl wait --for=condition`, which fails
			// outright when it reads the CRD before its status has conditions
			// (a null list).
			for _, f := range crds {
				eventually(t, time.Minute, "the CRDs of "+f+" to be Established", func() (bool, string) {
					got := s.get("", "-f", f, "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
					return got == "True", got
				})
			}
			for _, f := range files {
				s.kubectl("", "apply", "-f", f)
			}
		}
		out := s.kubectl("", "get", "pp,op", "-A", "-o", "name")
		for _, want := range []string{"propagationpolicy.policy.karmada.io/nginx-propagation", "overridepolicy.policy.karmada.io/nginx-op"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s missing after applying the samples:\n%s", want, out)
			}
		}
	})

	blocks := seedYAMLBlocks(t)
	t.Run("every YAML example of the seed applies unchanged", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "foo")
		for i, b := range blocks {
			if i == 4 {
				continue // the mis-indented batch-migration policy, below
			}
			if strings.Contains(b, "kind: MultiClusterService") {
				// The seed's two examples are both "foo", CrossCluster then
				// LoadBalancer; a MultiClusterService's types are fixed at
				// creation (Karmada since v1.9, and issue #14), so each is
				// applied on its own.
				s.kubectl("", "delete", "multiclusterservice", "foo", "--ignore-not-found")
			}
			if out, err := s.apply(b); err != nil {
				t.Errorf("seed example %d does not apply: %v\n%s\n%s", i+1, err, out, b)
			}
		}
	})

	t.Run("the mis-indented batch-migration policy is refused, and applies once re-indented", func(t *testing.T) {
		bad := blocks[4]
		out, err := s.apply(bad)
		if err == nil {
			t.Fatalf("mis-indented policy was accepted:\n%s", out)
		}
		for _, want := range []string{"priority", "resourceSelectors", "schedulerName"} {
			if !strings.Contains(out, want) {
				t.Errorf("refusal does not name the field %s:\n%s", want, out)
			}
		}
		fixed := reindentUnderSpec(bad)
		if out, err := s.apply(fixed); err != nil {
			t.Fatalf("re-indented policy is refused: %v\n%s\n%s", err, out, fixed)
		}
		if got := s.kubectl("", "get", "pp", "deployments-pp", "-n", "foo", "-o", "jsonpath={.spec.conflictResolution}/{.spec.resourceSelectors[0].kind}"); got != "Overwrite/Deployment" {
			t.Errorf("stored policy: %q", got)
		}
	})

	t.Run("a FederatedHPA with behavior but no selectPolicy is defaulted as Kubernetes defaults an HPA", func(t *testing.T) {
		// Karmada issue 4085: this object crashed Karmada's controller.
		if out, err := s.apply(`apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: defaults, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  behavior:
    scaleUp: {stabilizationWindowSeconds: 0}
    scaleDown: {}
`); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		got := s.kubectl("", "get", "fhpa", "defaults", "-n", "default", "-o",
			`jsonpath={.spec.minReplicas} {.spec.behavior.scaleUp.selectPolicy} {range .spec.behavior.scaleUp.policies[*]}{.type}:{.value}/{.periodSeconds} {end}{.spec.behavior.scaleDown.selectPolicy} {range .spec.behavior.scaleDown.policies[*]}{.type}:{.value}/{.periodSeconds} {end}{.spec.metrics[0].resource.name}={.spec.metrics[0].resource.target.averageUtilization}`)
		if want := "1 Max Pods:4/15 Percent:100/15 Max Percent:100/15 cpu=80"; got != want {
			t.Errorf("read back %q, want %q", got, want)
		}
	})

	t.Run("a MultiClusterService's types are one type, fixed at creation", func(t *testing.T) {
		mcs := func(types string) string {
			return "apiVersion: networking.karmada.io/v1alpha1\nkind: MultiClusterService\nmetadata: {name: typed, namespace: default}\nspec:\n  types: " + types + "\n"
		}
		if out, err := s.apply(mcs("[CrossCluster, LoadBalancer]")); err == nil || !strings.Contains(out, "spec.types must hold one type") {
			t.Errorf("both types: %v\n%s", err, out)
		}
		if out, err := s.apply(mcs("[CrossCluster]")); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if out, err := s.apply(mcs("[LoadBalancer]")); err == nil || !strings.Contains(out, "spec.types cannot be changed after creation") {
			t.Errorf("types changed: %v\n%s", err, out)
		}
	})

	t.Run("invalid policies are refused at admission, naming the field", func(t *testing.T) {
		cases := map[string]struct{ yaml, want string }{
			"preemption Always without a selector name": {`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bad-preempt, namespace: default}
spec:
  preemption: Always
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  placement: {}
`, "spec"},
			"FederatedHPA on an unknown metric type": {`apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: bad-fhpa, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  maxReplicas: 5
  metrics:
  - type: Prometheus
`, "spec.metrics"},
			"MultiClusterService with a port out of range": {`apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata: {name: bad-port, namespace: default}
spec:
  types: [LoadBalancer]
  ports: [{port: 70000}]
`, "spec.ports[0].port"},
			"MultiClusterService with a cluster name that is not a DNS label": {`apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata: {name: bad-cluster, namespace: default}
spec:
  types: [CrossCluster]
  consumerClusters: [{name: Member_1}]
`, "spec.consumerClusters[0].name"},
			"MultiClusterService with a v1.7 cluster name that is not a DNS label": {`apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata: {name: bad-range, namespace: default}
spec:
  types: [CrossCluster]
  range: {clusterNames: [a.b]}
`, "spec.range.clusterNames[0]"},
			"FederatedHPA with minReplicas above maxReplicas": {`apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: bad-fhpa-bounds, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  minReplicas: 6
  maxReplicas: 5
`, "spec.maxReplicas"},
			"FederatedHPA with a Value target on a Resource metric (the HPA's own validation)": {`apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: bad-fhpa-target, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Value, value: "1"}}
`, "spec.metrics[0].resource.target"},
			"FederatedHPA with a bad scale-up policy": {`apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: bad-fhpa-behavior, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  maxReplicas: 5
  behavior:
    scaleUp:
      selectPolicy: Bogus
      policies: [{type: Pods, value: 0, periodSeconds: 4000}]
`, "spec.behavior.scaleUp"},
			"CronFederatedHPA with duplicate rule names": {`apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: bad-cron, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  rules:
  - {name: a, schedule: "0 9 * * *", targetReplicas: 2}
  - {name: a, schedule: "0 10 * * *", targetReplicas: 1}
`, "rules"},
			"an unknown conflictResolution": {`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bad-conflict, namespace: default}
spec:
  conflictResolution: Replace
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  placement: {}
`, "spec.conflictResolution"},
			"a fieldSelector on a key Karmada does not support": {`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bad-field-key, namespace: default}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  placement:
    clusterAffinity:
      fieldSelector:
        matchExpressions: [{key: color, operator: In, values: [blue]}]
`, `unsupported key "color", must be provider, region, or zone`},
			"an OverridePolicy fieldSelector with Exists": {`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: bad-field-op, namespace: default}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  overrideRules:
  - targetCluster:
      fieldSelector:
        matchExpressions: [{key: zone, operator: Exists}]
    overriders:
      labelsOverrider: [{operator: add, value: {a: b}}]
`, `spec.overrideRules[0].targetCluster.fieldSelector.matchExpressions[0].operator`},
		}
		for name, tc := range cases {
			out, err := s.apply(tc.yaml)
			if err == nil {
				t.Errorf("%s: accepted:\n%s", name, out)
				continue
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("%s: refusal does not mention %q:\n%s", name, tc.want, out)
			}
		}
	})
}

// reindentUnderSpec moves the top-level priority, resourceSelectors and
// schedulerName lines of the seed's mis-indented policy under spec.
func reindentUnderSpec(doc string) string {
	var head, moved []string
	inMoved := false
	for _, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		top := line != "" && line[0] != ' ' && line[0] != '-'
		switch {
		case top && (strings.HasPrefix(line, "priority:") || strings.HasPrefix(line, "resourceSelectors:") || strings.HasPrefix(line, "schedulerName:")):
			inMoved = true
			moved = append(moved, "  "+line)
		case top:
			inMoved = false
			head = append(head, line)
		case inMoved:
			moved = append(moved, "  "+line)
		default:
			head = append(head, line)
		}
	}
	return strings.Join(append(head, moved...), "\n") + "\n"
}
