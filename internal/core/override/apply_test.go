package override

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// TestKarmadaSamples applies the upstream sample OverridePolicies to their resource templates for
// member1 and member2 and checks the manifest each member receives and the recorded annotation.
func TestKarmadaSamples(t *testing.T) {
	nginx, nginxOP := loadSample(t, "nginx/deployment.yaml", "nginx/overridepolicy.yaml")
	guestbook, guestbookOP := loadSample(t, "guestbook/guestbook.yaml", "guestbook/guestbooks-overridepolicy.yaml")

	tests := []struct {
		name           string
		template       *unstructured.Unstructured
		policy         *policyv1alpha1.OverridePolicy
		cluster        string
		edit           func(want *unstructured.Unstructured)
		wantAnnotation string
	}{
		{
			name: "nginx on member1: annotations added, absent keys neither removed nor replaced", template: nginx, policy: nginxOP, cluster: "member1",
			edit: func(want *unstructured.Unstructured) { want.SetAnnotations(map[string]string{"env": "skoala-stage"}) },
			wantAnnotation: `[{"policyName":"nginx-op","overriders":{"annotationsOverrider":[` +
				`{"operator":"add","value":{"env":"skoala-stage"}},{"operator":"remove","value":{"bom":"bom"}},` +
				`{"operator":"replace","value":{"emma":"sophia"}}]}}]`,
		},
		{
			name: "nginx on member2: labels added, absent keys neither removed nor replaced", template: nginx, policy: nginxOP, cluster: "member2",
			edit: func(want *unstructured.Unstructured) {
				want.SetLabels(map[string]string{"app": "nginx", "env": "skoala-dev", "env-stat": "skoala-stage"})
			},
			wantAnnotation: `[{"policyName":"nginx-op","overriders":{"labelsOverrider":[` +
				`{"operator":"add","value":{"env":"skoala-dev"}},{"operator":"add","value":{"env-stat":"skoala-stage"}},` +
				`{"operator":"remove","value":{"for":"for"}},{"operator":"replace","value":{"bar":"test"}}]}}]`,
		},
		{
			name: "guestbook on member1: size replaced and annotations added", template: guestbook, policy: guestbookOP, cluster: "member1",
			edit: func(want *unstructured.Unstructured) {
				if err := unstructured.SetNestedField(want.Object, int64(4), "spec", "size"); err != nil {
					t.Fatal(err)
				}
				want.SetAnnotations(map[string]string{"OverridePolicy": "test"})
			},
			wantAnnotation: `[{"policyName":"guestbook-sample","overriders":{"plaintext":[` +
				`{"path":"/spec/size","operator":"replace","value":4},` +
				`{"path":"/metadata/annotations","operator":"add","value":{"OverridePolicy":"test"}}]}}]`,
		},
		{
			name: "guestbook on member2: untouched", template: guestbook, policy: guestbookOP, cluster: "member2",
			edit: func(*unstructured.Unstructured) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.template.DeepCopy()
			got, applied, err := Apply(tt.template, member(tt.cluster, nil), []*policyv1alpha1.OverridePolicy{tt.policy}, nil)
			if err != nil {
				t.Fatalf("Apply() error: %v", err)
			}
			want := tt.template.DeepCopy()
			tt.edit(want)
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("overridden manifest (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, tt.template.Object); diff != "" {
				t.Errorf("Apply() modified its input (-before +after):\n%s", diff)
			}
			annotations, err := applied.Annotations()
			if err != nil {
				t.Fatalf("Annotations() error: %v", err)
			}
			if got := annotations[AppliedOverridesAnnotation]; got != tt.wantAnnotation {
				t.Errorf("%s = %s\nwant %s", AppliedOverridesAnnotation, got, tt.wantAnnotation)
			}
			if _, ok := annotations[AppliedClusterOverridesAnnotation]; ok {
				t.Errorf("unexpected %s annotation", AppliedClusterOverridesAnnotation)
			}
		})
	}
}

// loadSample reads an upstream sample template and OverridePolicy, placing both in namespace
// "default" as kubectl would.
func loadSample(t *testing.T, templateFile, policyFile string) (*unstructured.Unstructured, *policyv1alpha1.OverridePolicy) {
	t.Helper()
	template := object(t, string(referenceFile(t, "karmada-samples/"+templateFile)))
	template.SetNamespace("default")
	policy := &policyv1alpha1.OverridePolicy{}
	decodeYAML(t, referenceFile(t, "karmada-samples/"+policyFile), policy)
	policy.Namespace = "default"
	return template, policy
}

func TestSelection(t *testing.T) {
	web := deployment(t, "web", map[string]string{"tier": "frontend"}, "nginx")
	role := object(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n")
	mark := addLabel("marked", "yes")
	tests := []struct {
		name        string
		obj         *unstructured.Unstructured
		ops         []*policyv1alpha1.OverridePolicy
		cops        []*policyv1alpha1.ClusterOverridePolicy
		wantOP      []string
		wantCOP     []string
		wantChanged bool
	}{
		{name: "an OverridePolicy selects by kind in its own namespace", obj: web, wantChanged: true, wantOP: []string{"p"},
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").selecting(byKind("apps/v1", "Deployment")).rule(nil, mark).build()}},
		{name: "an OverridePolicy never selects templates of another namespace", obj: web,
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("other", "p").selecting(byKind("apps/v1", "Deployment")).rule(nil, mark).build()}},
		{name: "empty resourceSelectors select every template of the policy's namespace", obj: web, wantChanged: true, wantOP: []string{"p"},
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").rule(nil, mark).build()}},
		{name: "empty resourceSelectors do not reach other namespaces", obj: web,
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("other", "p").rule(nil, mark).build()}},
		{name: "apiVersion must match", obj: web,
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").selecting(byKind("apps/v1beta1", "Deployment")).rule(nil, mark).build()}},
		{name: "name must match", obj: web,
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").selecting(byName("apps/v1", "Deployment", "api")).rule(nil, mark).build()}},
		{name: "labelSelector must match", obj: web,
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").selecting(byLabels("apps/v1", "Deployment", map[string]string{"tier": "backend"})).rule(nil, mark).build()}},
		{name: "any one selector suffices", obj: web, wantChanged: true, wantOP: []string{"p"},
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").selecting(byKind("v1", "Service"), byLabels("apps/v1", "Deployment", map[string]string{"tier": "frontend"})).rule(nil, mark).build()}},
		{name: "policies being deleted are skipped", obj: web,
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").deleting().rule(nil, mark).build()}},
		{name: "an OverridePolicy without namespace is skipped", obj: web,
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("", "p").rule(nil, mark).build()}},
		{name: "a ClusterOverridePolicy selects namespaced templates anywhere", obj: web, wantChanged: true, wantCOP: []string{"c"},
			cops: []*policyv1alpha1.ClusterOverridePolicy{newPolicy("", "c").selecting(byKind("apps/v1", "Deployment")).rule(nil, mark).buildCluster()}},
		{name: "a ClusterOverridePolicy selector namespace restricts the namespace", obj: web,
			cops: []*policyv1alpha1.ClusterOverridePolicy{newPolicy("", "c").selecting(policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "other"}).rule(nil, mark).buildCluster()}},
		{name: "a ClusterOverridePolicy with empty selectors selects cluster-scoped templates", obj: role, wantChanged: true, wantCOP: []string{"c"},
			cops: []*policyv1alpha1.ClusterOverridePolicy{newPolicy("", "c").rule(nil, mark).buildCluster()}},
		{name: "an OverridePolicy never selects cluster-scoped templates", obj: role,
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").rule(nil, mark).build()}},
		{name: "nil policies are skipped", obj: web, ops: []*policyv1alpha1.OverridePolicy{nil}, cops: []*policyv1alpha1.ClusterOverridePolicy{nil}},
		{name: "selection sees the template before any override", obj: web, wantChanged: true, wantCOP: []string{"c"},
			cops: []*policyv1alpha1.ClusterOverridePolicy{newPolicy("", "c").rule(nil, addLabel("tier", "backend")).buildCluster()},
			ops:  []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").selecting(byLabels("apps/v1", "Deployment", map[string]string{"tier": "backend"})).rule(nil, mark).build()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, applied, err := Apply(tt.obj, member("member1", nil), tt.ops, tt.cops)
			if err != nil {
				t.Fatalf("Apply() error: %v", err)
			}
			if diff := cmp.Diff(tt.wantOP, applied.OverridePolicyNames()); diff != "" {
				t.Errorf("applied OverridePolicies (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCOP, applied.ClusterOverridePolicyNames()); diff != "" {
				t.Errorf("applied ClusterOverridePolicies (-want +got):\n%s", diff)
			}
			if changed := !cmp.Equal(tt.obj.Object, got.Object); changed != tt.wantChanged {
				t.Errorf("manifest changed = %v, want %v", changed, tt.wantChanged)
			}
		})
	}
}

// appendArg is an overriders value that appends arg to container c0, so the final args list
// records the order in which rules ran.
func appendArg(arg string) policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{ArgsOverrider: []policyv1alpha1.CommandArgsOverrider{
		{ContainerName: "c0", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{arg}}}}
}

func TestOrder(t *testing.T) {
	web := deployment(t, "web", map[string]string{"tier": "frontend"}, "nginx")
	kind := byKind("apps/v1", "Deployment")
	label := byLabels("apps/v1", "Deployment", map[string]string{"tier": "frontend"})
	name := byName("apps/v1", "Deployment", "web")
	tests := []struct {
		name     string
		ops      []*policyv1alpha1.OverridePolicy
		cops     []*policyv1alpha1.ClusterOverridePolicy
		wantArgs []string
	}{
		{name: "ClusterOverridePolicies run before OverridePolicies, whatever their precision",
			ops:      []*policyv1alpha1.OverridePolicy{newPolicy("default", "a-op").rule(nil, appendArg("op")).build()},
			cops:     []*policyv1alpha1.ClusterOverridePolicy{newPolicy("", "z-cop").selecting(name).rule(nil, appendArg("cop")).buildCluster()},
			wantArgs: []string{"cop", "op"}},
		{name: "less precise policies run first: all, kind, labelSelector, name",
			ops: []*policyv1alpha1.OverridePolicy{
				newPolicy("default", "a").selecting(name).rule(nil, appendArg("name")).build(),
				newPolicy("default", "b").selecting(label).rule(nil, appendArg("label")).build(),
				newPolicy("default", "c").selecting(kind).rule(nil, appendArg("kind")).build(),
				newPolicy("default", "d").rule(nil, appendArg("all")).build(),
			},
			wantArgs: []string{"all", "kind", "label", "name"}},
		{name: "a policy ranks by its most precise matching selector",
			ops: []*policyv1alpha1.OverridePolicy{
				newPolicy("default", "a").selecting(kind, name).rule(nil, appendArg("kind+name")).build(),
				newPolicy("default", "b").selecting(label).rule(nil, appendArg("label")).build(),
			},
			wantArgs: []string{"label", "kind+name"}},
		{name: "equal precision runs in name order",
			cops: []*policyv1alpha1.ClusterOverridePolicy{
				newPolicy("", "beta").selecting(kind).rule(nil, appendArg("beta")).buildCluster(),
				newPolicy("", "alpha").selecting(kind).rule(nil, appendArg("alpha")).buildCluster(),
			},
			wantArgs: []string{"alpha", "beta"}},
		{name: "rules run in list order and only for their target clusters",
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").
				rule(clusters("member1"), appendArg("first")).
				rule(clusters("member2"), appendArg("skipped")).
				rule(nil, appendArg("third")).build()},
			wantArgs: []string{"first", "third"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Apply(web, member("member1", nil), tt.ops, tt.cops)
			if err != nil {
				t.Fatalf("Apply() error: %v", err)
			}
			args, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
			gotArgs := args[0].(map[string]any)["args"]
			if diff := cmp.Diff(toAny(tt.wantArgs), gotArgs); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func TestTheMostPreciseAndLatestPolicyWins(t *testing.T) {
	web := deployment(t, "web", nil, "nginx")
	ops := []*policyv1alpha1.OverridePolicy{
		newPolicy("default", "by-name").selecting(byName("apps/v1", "Deployment", "web")).rule(nil, addLabel("env", "from-name")).build(),
		newPolicy("default", "by-kind").selecting(byKind("apps/v1", "Deployment")).rule(nil, addLabel("env", "from-kind")).build(),
	}
	cops := []*policyv1alpha1.ClusterOverridePolicy{
		newPolicy("", "cluster-wide").selecting(byName("apps/v1", "Deployment", "web")).rule(nil, addLabel("env", "from-cop")).buildCluster(),
	}
	got, applied, err := Apply(web, member("member1", nil), ops, cops)
	if err != nil {
		t.Fatalf("Apply() error: %v", err)
	}
	if env := got.GetLabels()["env"]; env != "from-name" {
		t.Errorf("label env = %q, want the by-name OverridePolicy's value", env)
	}
	if diff := cmp.Diff([]string{"by-kind", "by-name"}, applied.OverridePolicyNames()); diff != "" {
		t.Errorf("application order (-want +got):\n%s", diff)
	}
}

func TestOverriderKindsRunInKarmadaOrder(t *testing.T) {
	web := deployment(t, "web", nil, "nginx:1.25")
	rule := policyv1alpha1.Overriders{
		// Plaintext runs last, so it replaces what the image and annotations overriders did.
		Plaintext: []policyv1alpha1.PlaintextOverrider{
			plaintext(policyv1alpha1.OverriderOpAdd, "/metadata/annotations", `{"from":"plaintext"}`),
			plaintext(policyv1alpha1.OverriderOpReplace, "/spec/template/spec/containers/0/image", `"busybox:1"`),
		},
		ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpAdd, Value: "mirror.example"}},
		AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
			{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"from": "annotationsOverrider"}}},
		// The labels overrider runs before the field overrider, which then sees its label.
		LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
			{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"config": `{"a":1}`}}},
		FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/metadata/labels/config",
			JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: policyv1alpha1.OverriderOpReplace, Value: rawJSON("2")}}}},
	}
	got, _, err := Apply(web, member("member1", nil), []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").rule(nil, rule).build()}, nil)
	if err != nil {
		t.Fatalf("Apply() error: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"from": "plaintext"}, got.GetAnnotations()); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	containers, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
	if image := containers[0].(map[string]any)["image"]; image != "busybox:1" {
		t.Errorf("image = %v, want the plaintext value", image)
	}
	if config := got.GetLabels()["config"]; config != `{"a":2}` {
		t.Errorf("label config = %q, want the field overrider applied after the labels overrider", config)
	}
}

func TestDeprecatedForm(t *testing.T) {
	web := deployment(t, "web", nil, "nginx")
	onlyMember1 := newPolicy("default", "old").selecting(byKind("apps/v1", "Deployment")).deprecated(clusters("member1"), addLabel("old", "yes"))
	tests := []struct {
		name      string
		policy    *policyv1alpha1.OverridePolicy
		cluster   string
		wantLabel string
		wantRules int
	}{
		{name: "applies to the clusters of the top-level targetCluster", policy: onlyMember1.build(), cluster: "member1", wantLabel: "yes", wantRules: 1},
		{name: "skips other clusters", policy: onlyMember1.build(), cluster: "member2"},
		{name: "a nil top-level targetCluster means every cluster", cluster: "member2", wantLabel: "yes", wantRules: 1,
			policy: newPolicy("default", "old").deprecated(nil, addLabel("old", "yes")).build()},
		{name: "is ignored when overrideRules is set", cluster: "member1", wantLabel: "new", wantRules: 1,
			policy: newPolicy("default", "both").deprecated(nil, addLabel("old", "yes")).rule(nil, addLabel("old", "new")).build()},
		{name: "empty deprecated overriders are not recorded", cluster: "member1",
			policy: newPolicy("default", "empty").deprecated(clusters("member1"), policyv1alpha1.Overriders{}).build()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, applied, err := Apply(web, member(tt.cluster, nil), []*policyv1alpha1.OverridePolicy{tt.policy}, nil)
			if err != nil {
				t.Fatalf("Apply() error: %v", err)
			}
			if label := got.GetLabels()["old"]; label != tt.wantLabel {
				t.Errorf("label old = %q, want %q", label, tt.wantLabel)
			}
			if len(applied.Overrides) != tt.wantRules {
				t.Errorf("applied %d rules, want %d: %s", len(applied.Overrides), tt.wantRules, mustJSON(t, applied.Overrides))
			}
		})
	}
}

func TestTargetClusterSelectors(t *testing.T) {
	web := deployment(t, "web", nil, "nginx")
	prod := member("member1", map[string]string{"env": "prod"})
	prod.Spec.Region = "eu-west-1"
	tests := []struct {
		name   string
		target *policyv1alpha1.ClusterAffinity
		want   bool
	}{
		{name: "nil targets every cluster", want: true},
		{name: "clusterNames", target: clusters("member1"), want: true},
		{name: "exclude", target: &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"member1"}}},
		{name: "labelSelector", target: &policyv1alpha1.ClusterAffinity{LabelSelector: byLabels("", "", map[string]string{"env": "prod"}).LabelSelector}, want: true},
		{name: "fieldSelector", want: true, target: &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "region", Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-west-1"}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, applied, err := Apply(web, prod, []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").rule(tt.target, addLabel("x", "y")).build()}, nil)
			if err != nil {
				t.Fatalf("Apply() error: %v", err)
			}
			if got := len(applied.Overrides) == 1; got != tt.want {
				t.Errorf("rule applied = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestErrorsNamePolicyRuleAndPath(t *testing.T) {
	web := deployment(t, "web", nil, "nginx")
	missing := policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
		plaintext(policyv1alpha1.OverriderOpReplace, "/spec/paused", "true")}}
	badTarget := &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "color", Operator: corev1.NodeSelectorOpIn, Values: []string{"red"}}}}}
	tests := []struct {
		name string
		ops  []*policyv1alpha1.OverridePolicy
		cops []*policyv1alpha1.ClusterOverridePolicy
		want Error
	}{
		{name: "a plaintext replace of an absent field",
			ops:  []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").rule(nil, addLabel("a", "b")).rule(nil, missing).build()},
			want: Error{PolicyKind: KindOverridePolicy, PolicyNamespace: "default", PolicyName: "p", Field: "spec.overrideRules[1].overriders.plaintext[0]", Path: "/spec/paused"}},
		{name: "the deprecated form",
			cops: []*policyv1alpha1.ClusterOverridePolicy{newPolicy("", "c").deprecated(nil, missing).buildCluster()},
			want: Error{PolicyKind: KindClusterOverridePolicy, PolicyName: "c", Field: "spec.overriders.plaintext[0]", Path: "/spec/paused"}},
		{name: "an invalid targetCluster",
			ops:  []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").rule(badTarget, addLabel("a", "b")).build()},
			want: Error{PolicyKind: KindOverridePolicy, PolicyNamespace: "default", PolicyName: "p", Field: "spec.overrideRules[0].targetCluster"}},
		{name: "an image overrider on a field that is not a string",
			ops: []*policyv1alpha1.OverridePolicy{newPolicy("default", "p").rule(nil, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{
				Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/replicas"}, Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpRemove}}}).build()},
			want: Error{PolicyKind: KindOverridePolicy, PolicyNamespace: "default", PolicyName: "p", Field: "spec.overrideRules[0].overriders.imageOverrider[0]", Path: "/spec/replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := web.DeepCopy()
			got, applied, err := Apply(web, member("member1", nil), tt.ops, tt.cops)
			var oerr *Error
			if !errors.As(err, &oerr) {
				t.Fatalf("Apply() error = %v, want an *Error", err)
			}
			if diff := cmp.Diff(tt.want, *oerr, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Err" }, cmp.Ignore())); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			for _, part := range []string{tt.want.PolicyName, tt.want.Field, tt.want.Path} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("message %q does not name %q", err.Error(), part)
				}
			}
			if got != nil || applied.Overrides != nil || applied.ClusterOverrides != nil {
				t.Errorf("Apply() returned a result alongside the error")
			}
			if !cmp.Equal(before.Object, web.Object) {
				t.Errorf("Apply() modified its input")
			}
		})
	}
}

func TestAppliedAnnotations(t *testing.T) {
	web := deployment(t, "web", nil, "nginx")
	ops := []*policyv1alpha1.OverridePolicy{
		newPolicy("default", "b-op").selecting(byName("apps/v1", "Deployment", "web")).
			rule(nil, addLabel("rule", "1")).rule(clusters("member2"), addLabel("rule", "skipped")).rule(nil, addLabel("rule", "3")).build(),
		newPolicy("default", "a-op").selecting(byKind("apps/v1", "Deployment")).rule(nil, addLabel("a", "1")).build(),
	}
	cops := []*policyv1alpha1.ClusterOverridePolicy{newPolicy("", "cop").rule(nil, addLabel("c", "1")).buildCluster()}
	_, applied, err := Apply(web, member("member1", nil), ops, cops)
	if err != nil {
		t.Fatalf("Apply() error: %v", err)
	}
	got, err := applied.Annotations()
	if err != nil {
		t.Fatalf("Annotations() error: %v", err)
	}
	label := func(k, v string) string {
		return `{"labelsOverrider":[{"operator":"add","value":{"` + k + `":"` + v + `"}}]}`
	}
	want := map[string]string{
		// Sorted by policy name (as Karmada records them), rules of a policy in order.
		AppliedOverridesAnnotation: `[{"policyName":"a-op","overriders":` + label("a", "1") + `},` +
			`{"policyName":"b-op","overriders":` + label("rule", "1") + `},` +
			`{"policyName":"b-op","overriders":` + label("rule", "3") + `}]`,
		AppliedClusterOverridesAnnotation: `[{"policyName":"cop","overriders":` + label("c", "1") + `}]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Annotations() (-want +got):\n%s", diff)
	}
	// The Applied lists themselves keep application order.
	if names := applied.OverridePolicyNames(); !slices.Equal(names, []string{"a-op", "b-op"}) {
		t.Errorf("OverridePolicyNames() = %v", names)
	}
	if empty, _ := (Applied{}).Annotations(); len(empty) != 0 {
		t.Errorf("Annotations() of nothing applied = %v, want none", empty)
	}
}

func TestApplyRejectsMissingInputs(t *testing.T) {
	if _, _, err := Apply(nil, member("member1", nil), nil, nil); err == nil {
		t.Errorf("Apply(nil manifest) succeeded")
	}
	if _, _, err := Apply(deployment(t, "web", nil, "nginx"), nil, nil, nil); err == nil {
		t.Errorf("Apply(nil cluster) succeeded")
	}
}
