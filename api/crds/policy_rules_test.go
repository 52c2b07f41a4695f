package crds_test

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// --- PropagationPolicy / ClusterPropagationPolicy ---

// pp returns a valid PropagationPolicy (one named Deployment to member1) changed by edits.
func pp(edits ...func(*policyv1alpha1.PropagationSpec)) *policyv1alpha1.PropagationPolicy {
	p := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			},
		},
	}
	for _, edit := range edits {
		edit(&p.Spec)
	}
	return p
}

// cpp returns a valid ClusterPropagationPolicy changed by edits.
func cpp(edits ...func(*policyv1alpha1.PropagationSpec)) *policyv1alpha1.ClusterPropagationPolicy {
	return &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx"},
		Spec:       pp(edits...).Spec,
	}
}

func spread(constraints ...policyv1alpha1.SpreadConstraint) func(*policyv1alpha1.PropagationSpec) {
	return func(s *policyv1alpha1.PropagationSpec) { s.Placement.SpreadConstraints = constraints }
}

func applicationFailover(edit func(*policyv1alpha1.ApplicationFailoverBehavior)) func(*policyv1alpha1.PropagationSpec) {
	return func(s *policyv1alpha1.PropagationSpec) {
		s.PropagateDeps = true
		app := &policyv1alpha1.ApplicationFailoverBehavior{}
		edit(app)
		s.Failover = &policyv1alpha1.FailoverBehavior{Application: app}
	}
}

func affinityTerms(names ...string) func(*policyv1alpha1.PropagationSpec) {
	return func(s *policyv1alpha1.PropagationSpec) {
		s.Placement.ClusterAffinity = nil
		for _, n := range names {
			s.Placement.ClusterAffinities = append(s.Placement.ClusterAffinities, policyv1alpha1.ClusterAffinityTerm{
				AffinityName:    n,
				ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			})
		}
	}
}

func TestPropagationPolicyRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "a plain policy is accepted", obj: pp()},
		{
			name: "preemption Always with named selectors is accepted",
			obj:  pp(func(s *policyv1alpha1.PropagationSpec) { s.Preemption = policyv1alpha1.PreemptAlways }),
		},
		{
			name: "preemption Always with a selector without name is refused",
			obj: pp(func(s *policyv1alpha1.PropagationSpec) {
				s.Preemption = policyv1alpha1.PreemptAlways
				s.ResourceSelectors = append(s.ResourceSelectors, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap"})
			}),
			wantField: "spec.resourceSelectors",
			wantErr:   "spec.resourceSelectors[*].name must be set in every selector when spec.preemption is Always",
		},
		{
			name: "preemption Never with a selector without name is accepted",
			obj:  pp(func(s *policyv1alpha1.PropagationSpec) { s.ResourceSelectors[0].Name = "" }),
		},
		{
			name:      "an unknown preemption value is refused",
			obj:       pp(func(s *policyv1alpha1.PropagationSpec) { s.Preemption = "Sometimes" }),
			wantField: "spec.preemption",
			wantErr:   "Unsupported value: \"Sometimes\"",
		},
		{
			name:      "an unknown conflictResolution is refused",
			obj:       pp(func(s *policyv1alpha1.PropagationSpec) { s.ConflictResolution = "Merge" }),
			wantField: "spec.conflictResolution",
			wantErr:   "Unsupported value: \"Merge\"",
		},
		{
			name:      "an empty resourceSelectors list is refused",
			obj:       pp(func(s *policyv1alpha1.PropagationSpec) { s.ResourceSelectors = []policyv1alpha1.ResourceSelector{} }),
			wantField: "spec.resourceSelectors",
			wantErr:   "spec.resourceSelectors in body should have at least 1 items",
		},
		{
			name: "application failover with propagateDeps is accepted",
			obj:  pp(applicationFailover(func(*policyv1alpha1.ApplicationFailoverBehavior) {})),
		},
		{
			name: "application failover without propagateDeps is refused",
			obj: pp(applicationFailover(func(*policyv1alpha1.ApplicationFailoverBehavior) {}), func(s *policyv1alpha1.PropagationSpec) {
				s.PropagateDeps = false
			}),
			wantField: "spec.propagateDeps",
			wantErr:   "spec.propagateDeps must be true when spec.failover.application is set",
		},
		{
			name: "cluster failover without propagateDeps is accepted",
			obj: pp(func(s *policyv1alpha1.PropagationSpec) {
				s.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly}}
			}),
		},
		{
			name: "the Karmada v1.7 purge mode Graciously is accepted",
			obj: pp(applicationFailover(func(a *policyv1alpha1.ApplicationFailoverBehavior) {
				a.PurgeMode = policyv1alpha1.PurgeModeGraciously
				a.GracePeriodSeconds = ptr.To[int32](120)
			})),
		},
		{
			name: "the Karmada v1.7 purge mode Immediately is accepted",
			obj: pp(applicationFailover(func(a *policyv1alpha1.ApplicationFailoverBehavior) {
				a.PurgeMode = policyv1alpha1.PurgeModeImmediately
			})),
		},
		{
			name: "the purge mode Never is accepted",
			obj: pp(applicationFailover(func(a *policyv1alpha1.ApplicationFailoverBehavior) {
				a.PurgeMode = policyv1alpha1.PurgeModeNever
			})),
		},
		{
			name: "an unknown purge mode is refused",
			obj: pp(applicationFailover(func(a *policyv1alpha1.ApplicationFailoverBehavior) {
				a.PurgeMode = "Eventually"
			})),
			wantField: "spec.failover.application.purgeMode",
			wantErr:   "Unsupported value: \"Eventually\"",
		},
		{
			name: "a grace period of zero is refused",
			obj: pp(applicationFailover(func(a *policyv1alpha1.ApplicationFailoverBehavior) {
				a.GracePeriodSeconds = ptr.To[int32](0)
			})),
			wantField: "spec.failover.application.gracePeriodSeconds",
			wantErr:   "failover.application.gracePeriodSeconds must be greater than 0",
		},
		{
			name: "a grace period with purge mode Directly is refused",
			obj: pp(applicationFailover(func(a *policyv1alpha1.ApplicationFailoverBehavior) {
				a.PurgeMode = policyv1alpha1.PurgeModeDirectly
				a.GracePeriodSeconds = ptr.To[int32](60)
			})),
			wantField: "spec.failover.application.gracePeriodSeconds",
			wantErr:   "failover.application.gracePeriodSeconds only applies when failover.application.purgeMode is Gracefully",
		},
		{
			name: "a negative toleration is refused",
			obj: pp(applicationFailover(func(a *policyv1alpha1.ApplicationFailoverBehavior) {
				a.DecisionConditions.TolerationSeconds = ptr.To[int32](-1)
			})),
			wantField: "spec.failover.application.decisionConditions.tolerationSeconds",
			wantErr:   "failover.application.decisionConditions.tolerationSeconds must not be negative",
		},
		{
			name: "spreading by cluster and region is accepted",
			obj: pp(spread(
				policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 2, MaxGroups: 2},
				policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 2, MaxGroups: 4},
			)),
		},
		{
			name: "spreading by label alone is accepted",
			obj:  pp(spread(policyv1alpha1.SpreadConstraint{SpreadByLabel: "topology.example.com/rack", MaxGroups: 3})),
		},
		{
			name:      "spreading by region without a cluster constraint is refused",
			obj:       pp(spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 2})),
			wantField: "spec.placement.spreadConstraints",
			wantErr:   "placement.spreadConstraints must include a constraint with spreadByField 'cluster' when any constraint uses spreadByField",
		},
		{
			name: "a constraint naming neither field counts as spreading by cluster",
			obj: pp(spread(
				policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 2},
				policyv1alpha1.SpreadConstraint{MinGroups: 2, MaxGroups: 3},
			)),
		},
		{
			name: "spreadByField together with spreadByLabel is refused",
			obj: pp(spread(policyv1alpha1.SpreadConstraint{
				SpreadByField: policyv1alpha1.SpreadByFieldCluster, SpreadByLabel: "rack",
			})),
			wantField: "spec.placement.spreadConstraints[0]",
			wantErr:   "spreadConstraints[*]: spreadByField and spreadByLabel are mutually exclusive",
		},
		{
			name:      "maxGroups below minGroups is refused",
			obj:       pp(spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 3, MaxGroups: 2})),
			wantField: "spec.placement.spreadConstraints[0]",
			wantErr:   "spreadConstraints[*].maxGroups must be greater than or equal to minGroups",
		},
		{
			name:      "maxGroups below the default minGroups is refused",
			obj:       pp(spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: -1})),
			wantField: "spec.placement.spreadConstraints[0]",
			wantErr:   "spreadConstraints[*]: minGroups and maxGroups must not be negative",
		},
		{
			name: "the same spreadByField twice is refused",
			obj: pp(spread(
				policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1},
				policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 2},
			)),
			wantField: "spec.placement.spreadConstraints",
			wantErr:   "placement.spreadConstraints may use each spreadByField value only once",
		},
		{
			name:      "an unknown spreadByField is refused",
			obj:       pp(spread(policyv1alpha1.SpreadConstraint{SpreadByField: "rack"})),
			wantField: "spec.placement.spreadConstraints[0].spreadByField",
			wantErr:   "Unsupported value: \"rack\"",
		},
		{
			name: "static weights of at least 1 are accepted",
			obj: pp(func(s *policyv1alpha1.PropagationSpec) {
				s.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 1},
					}},
				}
			}),
		},
		{
			name: "a static weight of 0 is refused",
			obj: pp(func(s *policyv1alpha1.PropagationSpec) {
				s.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
					WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 0},
					}},
				}
			}),
			wantField: "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight",
			wantErr:   "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight in body should be greater than or equal to 1",
		},
		{name: "distinct affinity names are accepted", obj: pp(affinityTerms("primary", "backup"))},
		{
			name:      "duplicate affinity names are refused",
			obj:       pp(affinityTerms("primary", "primary")),
			wantField: "spec.placement.clusterAffinities",
			wantErr:   "placement.clusterAffinities[*].affinityName must be unique",
		},
		{
			name:      "an affinity name of 33 characters is refused",
			obj:       pp(affinityTerms(strings.Repeat("a", 33))),
			wantField: "spec.placement.clusterAffinities[0].affinityName",
			wantErr:   "Too long",
		},
		{
			name:      "an empty affinity name is refused",
			obj:       pp(affinityTerms("")),
			wantField: "spec.placement.clusterAffinities[0].affinityName",
			wantErr:   "affinityName in body should be at least 1 chars long",
		},
		{
			name: "clusterAffinity together with clusterAffinities is refused",
			obj: pp(affinityTerms("primary"), func(s *policyv1alpha1.PropagationSpec) {
				s.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}
			}),
			wantField: "spec.placement",
			wantErr:   "placement.clusterAffinities cannot be used together with placement.clusterAffinity",
		},
		{
			name: "suspending dispatching everywhere and on named clusters at once is refused",
			obj: pp(func(s *policyv1alpha1.PropagationSpec) {
				s.Suspension = &policyv1alpha1.Suspension{
					Dispatching:           ptr.To(true),
					DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member1"}},
				}
			}),
			wantField: "spec.suspension",
			wantErr:   "suspension.dispatching cannot be combined with suspension.dispatchingOnClusters.clusterNames",
		},
		{
			name: "a ClusterPropagationPolicy is held to the same rules",
			obj: cpp(func(s *policyv1alpha1.PropagationSpec) {
				s.Preemption = policyv1alpha1.PreemptAlways
				s.ResourceSelectors[0].Name = ""
			}),
			wantField: "spec.resourceSelectors",
			wantErr:   "spec.resourceSelectors[*].name must be set in every selector when spec.preemption is Always",
		},
	})
}

// TestPropagationPolicyDefaults checks the CRD defaults that stand in for Karmada's defaults.
func TestPropagationPolicyDefaults(t *testing.T) {
	as := newAdmitters(t)
	got := admitTyped(t, as, pp(
		applicationFailover(func(*policyv1alpha1.ApplicationFailoverBehavior) {}),
		spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster}),
		func(s *policyv1alpha1.PropagationSpec) {
			s.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{}
		},
	))
	if len(got.Errors) > 0 {
		t.Fatalf("unexpected errors:\n%s", errorLines(got))
	}
	var p policyv1alpha1.PropagationPolicy
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &p); err != nil {
		t.Fatal(err)
	}
	s := p.Spec
	checks := []struct {
		field string
		got   any
		want  any
	}{
		{"spec.priority", ptr.Deref(s.Priority, -1), int32(0)},
		{"spec.preemption", s.Preemption, policyv1alpha1.PreemptNever},
		{"spec.conflictResolution", s.ConflictResolution, policyv1alpha1.ConflictAbort},
		{"spec.schedulerName", s.SchedulerName, "default-scheduler"},
		{"spec.failover.application.purgeMode", s.Failover.Application.PurgeMode, policyv1alpha1.PurgeModeGracefully},
		{"spec.failover.application.decisionConditions.tolerationSeconds", ptr.Deref(s.Failover.Application.DecisionConditions.TolerationSeconds, -1), int32(300)},
		{"spec.placement.spreadConstraints[0].minGroups", s.Placement.SpreadConstraints[0].MinGroups, 1},
		{"spec.placement.replicaScheduling.replicaSchedulingType", s.Placement.ReplicaScheduling.ReplicaSchedulingType, policyv1alpha1.ReplicaSchedulingTypeDivided},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s defaulted to %v, want %v", c.field, c.got, c.want)
		}
	}
}

// --- OverridePolicy / ClusterOverridePolicy ---

// op returns a valid OverridePolicy (one plaintext replace on member1) changed by edits.
func op(edits ...func(*policyv1alpha1.OverrideSpec)) *policyv1alpha1.OverridePolicy {
	o := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
					Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: jsonValue(`3`),
				}}},
			}},
		},
	}
	for _, edit := range edits {
		edit(&o.Spec)
	}
	return o
}

func jsonValue(raw string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(raw)} }

func overriders(edit func(*policyv1alpha1.Overriders)) func(*policyv1alpha1.OverrideSpec) {
	return func(s *policyv1alpha1.OverrideSpec) { edit(&s.OverrideRules[0].Overriders) }
}

func fieldOverrider(f policyv1alpha1.FieldOverrider) func(*policyv1alpha1.OverrideSpec) {
	return overriders(func(o *policyv1alpha1.Overriders) { o.FieldOverrider = []policyv1alpha1.FieldOverrider{f} })
}

func TestOverridePolicyRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "a plain override is accepted", obj: op()},
		{
			name:      "a plaintext path without a leading slash is refused",
			obj:       op(overriders(func(o *policyv1alpha1.Overriders) { o.Plaintext[0].Path = "spec/replicas" })),
			wantField: "spec.overrideRules[0].overriders.plaintext[0].path",
			wantErr:   "plaintext[*].path must be a JSON pointer starting with '/'",
		},
		{
			name:      "an unknown plaintext operator is refused",
			obj:       op(overriders(func(o *policyv1alpha1.Overriders) { o.Plaintext[0].Operator = "merge" })),
			wantField: "spec.overrideRules[0].overriders.plaintext[0].operator",
			wantErr:   "Unsupported value: \"merge\"",
		},
		{
			name: "an image predicate path with a leading slash is accepted",
			obj: op(overriders(func(o *policyv1alpha1.Overriders) {
				o.ImageOverrider = []policyv1alpha1.ImageOverrider{{
					Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/0/image"},
					Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "registry.example.com",
				}}
			})),
		},
		{
			name: "an image predicate path without a leading slash is refused",
			obj: op(overriders(func(o *policyv1alpha1.Overriders) {
				o.ImageOverrider = []policyv1alpha1.ImageOverrider{{
					Predicate: &policyv1alpha1.ImagePredicate{Path: "spec/template/spec/containers/0/image"},
					Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "registry.example.com",
				}}
			})),
			wantField: "spec.overrideRules[0].overriders.imageOverrider[0].predicate.path",
			wantErr:   "imageOverrider[*].predicate.path must be a JSON pointer starting with '/'",
		},
		{
			name: "an unknown image component is refused",
			obj: op(overriders(func(o *policyv1alpha1.Overriders) {
				o.ImageOverrider = []policyv1alpha1.ImageOverrider{{Component: "Digest", Operator: policyv1alpha1.OverriderOpReplace}}
			})),
			wantField: "spec.overrideRules[0].overriders.imageOverrider[0].component",
			wantErr:   "Unsupported value: \"Digest\"",
		},
		{
			name: "the replace operator is refused for command overriders",
			obj: op(overriders(func(o *policyv1alpha1.Overriders) {
				o.CommandOverrider = []policyv1alpha1.CommandArgsOverrider{{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpReplace}}
			})),
			wantField: "spec.overrideRules[0].overriders.commandOverrider[0].operator",
			wantErr:   "Unsupported value: \"replace\"",
		},
		{
			name: "a field overrider with JSON pointers is accepted",
			obj: op(fieldOverrider(policyv1alpha1.FieldOverrider{
				FieldPath: "/data/config.json",
				JSON: []policyv1alpha1.JSONPatchOperation{
					{SubPath: "/db/port", Operator: policyv1alpha1.OverriderOpReplace, Value: jsonValue(`5432`)},
					{SubPath: "", Operator: policyv1alpha1.OverriderOpReplace, Value: jsonValue(`{"db":{}}`)},
				},
			})),
		},
		{
			name:      "a field overrider path without a leading slash is refused",
			obj:       op(fieldOverrider(policyv1alpha1.FieldOverrider{FieldPath: "data/config.json"})),
			wantField: "spec.overrideRules[0].overriders.fieldOverrider[0].fieldPath",
			wantErr:   "fieldOverrider[*].fieldPath must be a JSON pointer starting with '/'",
		},
		{
			name: "a JSON sub path without a leading slash is refused",
			obj: op(fieldOverrider(policyv1alpha1.FieldOverrider{
				FieldPath: "/data/config.json",
				JSON:      []policyv1alpha1.JSONPatchOperation{{SubPath: "db/port", Operator: policyv1alpha1.OverriderOpRemove}},
			})),
			wantField: "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].subPath",
			wantErr:   "fieldOverrider[*].json[*].subPath must be empty or a JSON pointer starting with '/'",
		},
		{
			name: "a YAML sub path without a leading slash is refused",
			obj: op(fieldOverrider(policyv1alpha1.FieldOverrider{
				FieldPath: "/data/config.yaml",
				YAML:      []policyv1alpha1.YAMLPatchOperation{{SubPath: "db/port", Operator: policyv1alpha1.OverriderOpRemove}},
			})),
			wantField: "spec.overrideRules[0].overriders.fieldOverrider[0].yaml[0].subPath",
			wantErr:   "fieldOverrider[*].yaml[*].subPath must be empty or a JSON pointer starting with '/'",
		},
		{
			name: "a field overrider with both JSON and YAML operations is refused",
			obj: op(fieldOverrider(policyv1alpha1.FieldOverrider{
				FieldPath: "/data/config",
				JSON:      []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: policyv1alpha1.OverriderOpRemove}},
				YAML:      []policyv1alpha1.YAMLPatchOperation{{SubPath: "/a", Operator: policyv1alpha1.OverriderOpRemove}},
			})),
			wantField: "spec.overrideRules[0].overriders.fieldOverrider[0]",
			wantErr:   "fieldOverrider[*] cannot set both json and yaml",
		},
		{
			name: "the deprecated targetCluster next to overrideRules is refused",
			obj: op(func(s *policyv1alpha1.OverrideSpec) {
				s.TargetCluster = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}
			}),
			wantField: "spec.targetCluster",
			wantErr:   "spec.overrideRules and the deprecated spec.targetCluster cannot both be set",
		},
		{
			name: "the deprecated overriders next to overrideRules are refused",
			obj: op(func(s *policyv1alpha1.OverrideSpec) {
				s.Overriders.LabelsOverrider = []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"a": "b"}}}
			}),
			wantField: "spec.overriders",
			wantErr:   "spec.overrideRules and the deprecated spec.overriders cannot both be set",
		},
		{
			name: "the deprecated form alone is accepted",
			obj: op(func(s *policyv1alpha1.OverrideSpec) {
				s.Overriders = s.OverrideRules[0].Overriders
				s.TargetCluster = s.OverrideRules[0].TargetCluster
				s.OverrideRules = nil
			}),
		},
		{
			name: "a ClusterOverridePolicy is held to the same rules",
			obj: &policyv1alpha1.ClusterOverridePolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "nginx"},
				Spec:       op(overriders(func(o *policyv1alpha1.Overriders) { o.Plaintext[0].Path = "spec" })).Spec,
			},
			wantField: "spec.overrideRules[0].overriders.plaintext[0].path",
			wantErr:   "plaintext[*].path must be a JSON pointer starting with '/'",
		},
	})
}
