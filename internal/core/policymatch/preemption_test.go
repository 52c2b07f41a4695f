package policymatch

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// claimOf describes a policy for MayPreempt: kind, priority and preemption.
func claimOf(kind, name string, priority int32, preemption policyv1alpha1.PreemptionBehavior) Claim {
	c := Claim{Kind: kind, Name: name, Priority: priority, Preemption: preemption}
	if kind == KindPropagationPolicy {
		c.Namespace = "apps"
	}
	return c
}

func TestMayPreempt(t *testing.T) {
	const (
		pp, cpp = KindPropagationPolicy, KindClusterPropagationPolicy
		always  = policyv1alpha1.PreemptAlways
		never   = policyv1alpha1.PreemptNever
	)
	tests := []struct {
		name      string
		candidate Claim
		holder    Claim
		want      bool
	}{
		{name: "PP Always over a PP of lower priority", candidate: claimOf(pp, "high", 10, always), holder: claimOf(pp, "low", 0, never), want: true},
		{name: "PP Always does not take from a PP of equal priority", candidate: claimOf(pp, "a", 5, always), holder: claimOf(pp, "b", 5, never)},
		{name: "PP Always does not take from a PP of higher priority", candidate: claimOf(pp, "low", 1, always), holder: claimOf(pp, "high", 2, never)},
		{name: "PP Always takes from a CPP of lower priority", candidate: claimOf(pp, "pp", 1, always), holder: claimOf(cpp, "cpp", 0, never), want: true},
		{name: "PP Always takes from a CPP of equal priority", candidate: claimOf(pp, "pp", 3, always), holder: claimOf(cpp, "cpp", 3, never), want: true},
		{name: "PP Always takes from a CPP of higher priority", candidate: claimOf(pp, "pp", 0, always), holder: claimOf(cpp, "cpp", 100, always), want: true},
		{name: "CPP Always over a CPP of lower priority", candidate: claimOf(cpp, "high", 10, always), holder: claimOf(cpp, "low", 0, never), want: true},
		{name: "CPP Always does not take from a CPP of equal priority", candidate: claimOf(cpp, "a", 4, always), holder: claimOf(cpp, "b", 4, never)},
		{name: "CPP Always never takes from a PP, even of lower priority", candidate: claimOf(cpp, "cpp", 100, always), holder: claimOf(pp, "pp", 0, never)},
		{name: "PP Never does not preempt", candidate: claimOf(pp, "high", 10, never), holder: claimOf(pp, "low", 0, never)},
		{name: "PP with preemption unset does not preempt", candidate: claimOf(pp, "high", 10, ""), holder: claimOf(cpp, "cpp", 0, never)},
		{name: "CPP Never does not preempt", candidate: claimOf(cpp, "high", 10, never), holder: claimOf(cpp, "low", 0, never)},
		{name: "implicit priority does not count: name over kind at equal priority", candidate: Claim{Kind: pp, Namespace: "apps", Name: "by-name", MatchLevel: MatchByName, Preemption: always}, holder: Claim{Kind: pp, Namespace: "apps", Name: "by-kind", MatchLevel: MatchByKind}},
		{name: "negative priorities compare as numbers", candidate: claimOf(pp, "a", -1, always), holder: claimOf(pp, "b", -5, never), want: true},
		{name: "a policy never preempts itself", candidate: claimOf(pp, "same", 10, always), holder: claimOf(pp, "same", 0, never)},
		{name: "a PP of the same name in another namespace is another policy", candidate: claimOf(pp, "same", 10, always), holder: Claim{Kind: pp, Namespace: "other", Name: "same"}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MayPreempt(tt.candidate, tt.holder); got != tt.want {
				t.Errorf("MayPreempt(%+v, %+v) = %v, want %v", tt.candidate, tt.holder, got, tt.want)
			}
		})
	}
}

func (b *policyBuilder) preempting() *policyBuilder {
	b.spec.Preemption = policyv1alpha1.PreemptAlways
	return b
}

func TestPreemptor(t *testing.T) {
	web := deployment("apps", "web").labels("app", "web").obj()
	ppHolder := Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "base", Priority: 0}
	cppHolder := Claim{Kind: KindClusterPropagationPolicy, Name: "base", Priority: 50}
	tests := []struct {
		name   string
		holder Claim
		pps    []*policyv1alpha1.PropagationPolicy
		cpps   []*policyv1alpha1.ClusterPropagationPolicy
		want   string // "Kind/name", "" for none
	}{
		{
			name:   "a higher PP with preemption takes the template",
			holder: ppHolder,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("nginx-pp", byName("web")).priority(10).preempting().pp("apps")},
			want:   "PropagationPolicy/nginx-pp",
		},
		{
			name:   "a higher PP without preemption does not",
			holder: ppHolder,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("nginx-pp", byName("web")).priority(10).pp("apps")},
		},
		{
			name:   "the holder itself, listed with the others, is not a candidate",
			holder: Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "base", Priority: 0},
			pps:    []*policyv1alpha1.PropagationPolicy{policy("base", byName("web")).priority(0).preempting().pp("apps")},
		},
		{
			name:   "a preempting PP that does not select the template does not take it",
			holder: ppHolder,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("api-pp", byName("api")).priority(10).preempting().pp("apps")},
		},
		{
			name:   "a preempting PP of another namespace does not take it",
			holder: ppHolder,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("nginx-pp", byName("web")).priority(10).preempting().pp("other")},
		},
		{
			name:   "a preempting PP being deleted does not take it",
			holder: ppHolder,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("nginx-pp", byName("web")).priority(10).preempting().deleting().pp("apps")},
		},
		{
			name:   "the best of several preempting PPs takes it at once",
			holder: ppHolder,
			pps: []*policyv1alpha1.PropagationPolicy{
				policy("p5", byName("web")).priority(5).preempting().pp("apps"),
				policy("p9", byName("web")).priority(9).preempting().pp("apps"),
				policy("p20-never", byName("web")).priority(20).pp("apps"),
			},
			want: "PropagationPolicy/p9",
		},
		{
			name:   "a PP of any priority takes the template from a CPP",
			holder: cppHolder,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("low-pp", byName("web")).priority(-3).preempting().pp("apps")},
			want:   "PropagationPolicy/low-pp",
		},
		{
			name:   "a PP beats a CPP of higher priority as preemptor",
			holder: cppHolder,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("pp", byName("web")).priority(0).preempting().pp("apps")},
			cpps:   []*policyv1alpha1.ClusterPropagationPolicy{policy("cpp-high", inNamespace(byName("web"), "apps")).priority(99).preempting().cpp()},
			want:   "PropagationPolicy/pp",
		},
		{
			name:   "a higher CPP takes the template from a CPP",
			holder: cppHolder,
			cpps:   []*policyv1alpha1.ClusterPropagationPolicy{policy("cpp-high", inNamespace(byName("web"), "apps")).priority(51).preempting().cpp()},
			want:   "ClusterPropagationPolicy/cpp-high",
		},
		{
			name:   "a CPP of equal priority does not",
			holder: cppHolder,
			cpps:   []*policyv1alpha1.ClusterPropagationPolicy{policy("cpp-equal", inNamespace(byName("web"), "apps")).priority(50).preempting().cpp()},
		},
		{
			name:   "a CPP never takes the template from a PP",
			holder: ppHolder,
			cpps:   []*policyv1alpha1.ClusterPropagationPolicy{policy("cpp-high", inNamespace(byName("web"), "apps")).priority(1000).preempting().cpp()},
		},
		{
			name:   "after the holder's priority drops, a preempting PP that now beats it takes the template",
			holder: Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "base", Priority: 3},
			pps:    []*policyv1alpha1.PropagationPolicy{policy("p4", byName("web")).priority(4).preempting().pp("apps")},
			want:   "PropagationPolicy/p4",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Preemptor(web, tt.holder, tt.pps, tt.cpps)
			name := ""
			if ok {
				name = got.Kind + "/" + got.Name
				if !MayPreempt(got, tt.holder) || got.Preemption != policyv1alpha1.PreemptAlways {
					t.Errorf("Preemptor returned %+v, which may not preempt %+v", got, tt.holder)
				}
			}
			if diff := cmp.Diff(tt.want, name); diff != "" {
				t.Errorf("Preemptor() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaimNames(t *testing.T) {
	pp := Claim{Kind: KindPropagationPolicy, Namespace: "foo", Name: "nginx-pp"}
	cpp := Claim{Kind: KindClusterPropagationPolicy, Name: "base"}
	if pp.String() != "PropagationPolicy(foo/nginx-pp)" || cpp.String() != "ClusterPropagationPolicy(base)" {
		t.Errorf("String() = %q, %q", pp.String(), cpp.String())
	}
	if pp.Same(cpp) || !pp.Same(Claim{Kind: KindPropagationPolicy, Namespace: "foo", Name: "nginx-pp", Priority: 7}) {
		t.Error("Same() compares kind, namespace and name only")
	}
}
