package detector

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
)

// gates returns a feature gate with preemption on or off.
func gates(t *testing.T, preemption bool) featuregate.FeatureGate {
	t.Helper()
	g := features.New()
	if err := g.SetFromMap(map[string]bool{string(features.PropagationPolicyPreemption): preemption}); err != nil {
		t.Fatal(err)
	}
	return g
}

// claimedWeb is the Deployment foo/web carrying the claim of the policy
// kind/name (kind "" for no claim).
func claimedWeb(kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	u.SetNamespace("foo")
	u.SetName("web")
	u.SetUID("web-uid")
	switch kind {
	case policymatch.KindPropagationPolicy:
		u.SetAnnotations(map[string]string{policymatch.PropagationPolicyNameAnnotation: name, policymatch.PropagationPolicyNamespaceAnnotation: "foo"})
	case policymatch.KindClusterPropagationPolicy:
		u.SetAnnotations(map[string]string{policymatch.ClusterPropagationPolicyNameAnnotation: name})
	}
	return u
}

// pp is a PropagationPolicy of namespace foo selecting Deployments (web by
// name when named), with its permanent id.
func pp(name string, priority int32, preemption policyv1alpha1.PreemptionBehavior, named bool) *policyv1alpha1.PropagationPolicy {
	sel := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	if named {
		sel.Name = "web"
	}
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "foo", Name: name, UID: types.UID("uid-pp-" + name),
			Labels: map[string]string{policymatch.PropagationPolicyPermanentIDLabel: "id-" + name}},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{sel}, Priority: ptr.To(priority), Preemption: preemption},
	}
}

// cpp is a ClusterPropagationPolicy selecting every Deployment (foo/web by
// name when named), with its permanent id.
func cpp(name string, priority int32, preemption policyv1alpha1.PreemptionBehavior, named bool) *policyv1alpha1.ClusterPropagationPolicy {
	sel := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	if named {
		sel.Namespace, sel.Name = "foo", "web"
	}
	return &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{policymatch.ClusterPropagationPolicyPermanentIDLabel: "id-" + name}},
		Spec:       policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{sel}, Priority: ptr.To(priority), Preemption: preemption},
	}
}

func TestChoose(t *testing.T) {
	const always, never = policyv1alpha1.PreemptAlways, policyv1alpha1.PreemptNever
	tests := []struct {
		name          string
		gate          bool
		tmpl          *unstructured.Unstructured
		pps           []*policyv1alpha1.PropagationPolicy
		cpps          []*policyv1alpha1.ClusterPropagationPolicy
		want          string // the chosen policy's String()
		wantPreempted string // the preempted claim's String(), "" for none
	}{
		{
			name: "the seed's example: nginx-pp (10, Always) takes web from the broad PP at 0",
			gate: true, tmpl: claimedWeb(policymatch.KindPropagationPolicy, "broad"),
			pps:  []*policyv1alpha1.PropagationPolicy{pp("broad", 0, never, false), pp("nginx-pp", 10, always, true)},
			want: "PropagationPolicy(foo/nginx-pp)", wantPreempted: "PropagationPolicy(foo/broad)",
		},
		{
			name: "with the gate off the claim stays",
			gate: false, tmpl: claimedWeb(policymatch.KindPropagationPolicy, "broad"),
			pps:  []*policyv1alpha1.PropagationPolicy{pp("broad", 0, never, false), pp("nginx-pp", 10, always, true)},
			want: "PropagationPolicy(foo/broad)",
		},
		{
			name: "a higher PP with preemption Never does not take it",
			gate: true, tmpl: claimedWeb(policymatch.KindPropagationPolicy, "broad"),
			pps:  []*policyv1alpha1.PropagationPolicy{pp("broad", 0, never, false), pp("nginx-pp", 10, never, true)},
			want: "PropagationPolicy(foo/broad)",
		},
		{
			name: "a PP takes the template from a CPP of higher priority",
			gate: true, tmpl: claimedWeb(policymatch.KindClusterPropagationPolicy, "base"),
			pps:  []*policyv1alpha1.PropagationPolicy{pp("nginx-pp", 0, always, true)},
			cpps: []*policyv1alpha1.ClusterPropagationPolicy{cpp("base", 100, never, false)},
			want: "PropagationPolicy(foo/nginx-pp)", wantPreempted: "ClusterPropagationPolicy(base)",
		},
		{
			name: "a CPP never takes the template from a PP",
			gate: true, tmpl: claimedWeb(policymatch.KindPropagationPolicy, "broad"),
			pps:  []*policyv1alpha1.PropagationPolicy{pp("broad", 0, never, false)},
			cpps: []*policyv1alpha1.ClusterPropagationPolicy{cpp("high", 100, always, true)},
			want: "PropagationPolicy(foo/broad)",
		},
		{
			name: "a higher CPP takes the template from a CPP",
			gate: true, tmpl: claimedWeb(policymatch.KindClusterPropagationPolicy, "base"),
			cpps: []*policyv1alpha1.ClusterPropagationPolicy{cpp("base", 0, never, false), cpp("high", 1, always, true)},
			want: "ClusterPropagationPolicy(high)", wantPreempted: "ClusterPropagationPolicy(base)",
		},
		{
			name: "after the holder's priority fell below a preempting policy's, that policy takes it",
			gate: true, tmpl: claimedWeb(policymatch.KindPropagationPolicy, "holder"),
			pps:  []*policyv1alpha1.PropagationPolicy{pp("holder", 3, never, true), pp("waiting", 4, always, true)},
			want: "PropagationPolicy(foo/waiting)", wantPreempted: "PropagationPolicy(foo/holder)",
		},
		{
			name: "an unclaimed template goes to the best match, with no preemption",
			gate: true, tmpl: claimedWeb("", ""),
			pps:  []*policyv1alpha1.PropagationPolicy{pp("broad", 0, never, false), pp("nginx-pp", 10, always, true)},
			want: "PropagationPolicy(foo/nginx-pp)",
		},
		{
			name: "a claim whose policy is gone goes to the best match, with no preemption",
			gate: true, tmpl: claimedWeb(policymatch.KindPropagationPolicy, "deleted"),
			pps:  []*policyv1alpha1.PropagationPolicy{pp("broad", 0, never, false)},
			want: "PropagationPolicy(foo/broad)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Detector{Features: gates(t, tt.gate)}
			dec, err := d.choose(context.Background(), tt.tmpl, tt.pps, tt.cpps)
			if err != nil || dec == nil {
				t.Fatalf("choose() = %v, %v", dec, err)
			}
			preempted := ""
			if dec.preempted != nil {
				preempted = dec.preempted.String()
			}
			if diff := cmp.Diff([]string{tt.want, tt.wantPreempted}, []string{dec.policy.claim.String(), preempted}); diff != "" {
				t.Errorf("choose() mismatch (-want +got):\n%s", diff)
			}
			if dec.policy.claim.PermanentID != "id-"+dec.policy.claim.Name {
				t.Errorf("the chosen claim has permanent id %q", dec.policy.claim.PermanentID)
			}
		})
	}
}

func TestReportPreemption(t *testing.T) {
	fake := record.NewFakeRecorder(10)
	d := &Detector{Events: &eventrecord.Recorder{Events: fake}}
	tmpl := claimedWeb(policymatch.KindClusterPropagationPolicy, "base")
	dec := &decision{
		policy:    &policy{claim: policymatch.Claim{Kind: policymatch.KindPropagationPolicy, Namespace: "foo", Name: "nginx-pp"}},
		preempted: &policymatch.Claim{Kind: policymatch.KindClusterPropagationPolicy, Name: "base"},
	}
	success, failed := preemptions(t, "success"), preemptions(t, "error")
	ctx := context.Background()
	d.reportPreemption(ctx, tmpl, dec, nil)
	d.reportPreemption(ctx, tmpl, dec, apierrors.NewConflict(schema.GroupResource{Resource: "deployments"}, "web", errors.New("changed")))
	d.reportPreemption(ctx, tmpl, dec, apierrors.NewForbidden(schema.GroupResource{Resource: "deployments"}, "web", errors.New("denied")))
	if got := preemptions(t, "success") - success; got != 1 {
		t.Errorf("policy_preemption_total{result=success} grew by %v, want 1", got)
	}
	if got := preemptions(t, "error") - failed; got != 1 {
		t.Errorf("policy_preemption_total{result=error} grew by %v, want 1 (a conflict is retried, not counted)", got)
	}
	want := []string{
		"Normal PreemptPolicySucceed PropagationPolicy(foo/nginx-pp) preempted ClusterPropagationPolicy(base) and now claims the template",
		`Warning PreemptPolicyFailed PropagationPolicy(foo/nginx-pp) could not preempt ClusterPropagationPolicy(base): deployments "web" is forbidden: denied`,
	}
	var got []string
	for len(fake.Events) > 0 {
		got = append(got, <-fake.Events)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// preemptions reads policy_preemption_total{result} as the controller
// manager serves it.
func preemptions(t *testing.T, result string) float64 {
	t.Helper()
	metrics.RegisterControllerManager()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "policy_preemption_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("policy_preemption_total{result=%q} is not served", result)
	return 0
}
