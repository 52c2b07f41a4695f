package policymatch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// objBuilder builds resource templates fluently.
type objBuilder struct{ u *unstructured.Unstructured }

func object(apiVersion, kind, namespace, name string) objBuilder {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return objBuilder{u}
}

func deployment(namespace, name string) objBuilder {
	return object("apps/v1", "Deployment", namespace, name)
}

func (b objBuilder) labels(kv ...string) objBuilder {
	l := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	b.u.SetLabels(l)
	return b
}

func (b objBuilder) obj() *unstructured.Unstructured { return b.u }

// Selector helpers.
func byKind() policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
}

func byName(name string) policyv1alpha1.ResourceSelector {
	s := byKind()
	s.Name = name
	return s
}

func byLabel(k, v string) policyv1alpha1.ResourceSelector {
	s := byKind()
	s.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	return s
}

func inNamespace(s policyv1alpha1.ResourceSelector, ns string) policyv1alpha1.ResourceSelector {
	s.Namespace = ns
	return s
}

// policyBuilder builds a PropagationSpec and its metadata, then either policy kind.
type policyBuilder struct {
	meta metav1.ObjectMeta
	spec policyv1alpha1.PropagationSpec
}

func policy(name string, selectors ...policyv1alpha1.ResourceSelector) *policyBuilder {
	return &policyBuilder{
		meta: metav1.ObjectMeta{Name: name},
		spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selectors},
	}
}

func (b *policyBuilder) priority(p int32) *policyBuilder { b.spec.Priority = &p; return b }

func (b *policyBuilder) permanentID(label, id string) *policyBuilder {
	b.meta.Labels = map[string]string{label: id}
	return b
}

func (b *policyBuilder) deleting() *policyBuilder {
	now := metav1.Now()
	b.meta.DeletionTimestamp = &now
	return b
}

func (b *policyBuilder) pp(namespace string) *policyv1alpha1.PropagationPolicy {
	m := b.meta
	m.Namespace = namespace
	return &policyv1alpha1.PropagationPolicy{ObjectMeta: m, Spec: b.spec}
}

func (b *policyBuilder) cpp() *policyv1alpha1.ClusterPropagationPolicy {
	return &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: b.meta, Spec: b.spec}
}

func TestSelectorMatches(t *testing.T) {
	web := deployment("apps", "web").labels("app", "web").obj()
	tests := []struct {
		name            string
		sel             policyv1alpha1.ResourceSelector
		policyNamespace string
		obj             *unstructured.Unstructured
		want            MatchLevel
		wantOK          bool
	}{
		{name: "kind only matches at kind level", sel: byKind(), policyNamespace: "apps", obj: web, want: MatchByKind, wantOK: true},
		{name: "name matches at name level", sel: byName("web"), policyNamespace: "apps", obj: web, want: MatchByName, wantOK: true},
		{name: "label selector matches at label level", sel: byLabel("app", "web"), policyNamespace: "apps", obj: web, want: MatchByLabelSelector, wantOK: true},
		{name: "other kind does not match", sel: policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "StatefulSet"}, policyNamespace: "apps", obj: web},
		{name: "other apiVersion does not match", sel: policyv1alpha1.ResourceSelector{APIVersion: "apps/v1beta1", Kind: "Deployment"}, policyNamespace: "apps", obj: web},
		{name: "other name does not match", sel: byName("api"), policyNamespace: "apps", obj: web},
		{name: "other labels do not match", sel: byLabel("app", "api"), policyNamespace: "apps", obj: web},
		{
			name: "name wins: a matching name ignores a non-matching label selector",
			sel: func() policyv1alpha1.ResourceSelector {
				s := byName("web")
				s.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
				return s
			}(),
			policyNamespace: "apps", obj: web, want: MatchByName, wantOK: true,
		},
		{
			name: "invalid label selector matches nothing",
			sel: func() policyv1alpha1.ResourceSelector {
				s := byKind()
				s.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
				return s
			}(),
			policyNamespace: "apps", obj: web,
		},
		{name: "PP: empty selector namespace defaults to the policy's", sel: byKind(), policyNamespace: "apps", obj: web, want: MatchByKind, wantOK: true},
		{name: "PP: never matches another namespace", sel: byKind(), policyNamespace: "other", obj: web},
		{name: "PP: selector naming another namespace matches nothing", sel: inNamespace(byKind(), "other"), policyNamespace: "other", obj: deployment("apps", "web").obj()},
		{name: "PP: selector naming its own namespace matches", sel: inNamespace(byKind(), "apps"), policyNamespace: "apps", obj: web, want: MatchByKind, wantOK: true},
		{name: "PP: never matches cluster-scoped objects", sel: policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Namespace"}, policyNamespace: "apps", obj: object("v1", "Namespace", "", "apps").obj()},
		{name: "CPP: empty selector namespace matches any namespace", sel: byKind(), obj: web, want: MatchByKind, wantOK: true},
		{name: "CPP: selector namespace must equal the object's", sel: inNamespace(byKind(), "other"), obj: web},
		{name: "CPP: selector namespace equal to the object's matches", sel: inNamespace(byKind(), "apps"), obj: web, want: MatchByKind, wantOK: true},
		{name: "CPP: matches cluster-scoped objects", sel: policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Namespace", Name: "apps"}, obj: object("v1", "Namespace", "", "apps").obj(), want: MatchByName, wantOK: true},
		{name: "nil object matches nothing", sel: byKind(), obj: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := SelectorMatches(tt.sel, tt.policyNamespace, tt.obj)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("SelectorMatches() = (%v, %v), want (%v, %v)", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestBestMatch(t *testing.T) {
	web := deployment("apps", "web").labels("app", "web").obj()
	tests := []struct {
		name   string
		obj    *unstructured.Unstructured
		pps    []*policyv1alpha1.PropagationPolicy
		cpps   []*policyv1alpha1.ClusterPropagationPolicy
		want   Claim
		wantOK bool
	}{
		{
			name: "higher priority wins over a more precise selector",
			obj:  web,
			pps: []*policyv1alpha1.PropagationPolicy{
				policy("by-name", byName("web")).priority(1).pp("apps"),
				policy("by-kind", byKind()).priority(5).pp("apps"),
			},
			want:   Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "by-kind", Priority: 5, MatchLevel: MatchByKind},
			wantOK: true,
		},
		{
			name: "on a priority tie name beats labelSelector beats kind",
			obj:  web,
			pps: []*policyv1alpha1.PropagationPolicy{
				policy("a-kind", byKind()).pp("apps"),
				policy("b-label", byLabel("app", "web")).pp("apps"),
				policy("c-name", byName("web")).pp("apps"),
			},
			want:   Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "c-name", MatchLevel: MatchByName},
			wantOK: true,
		},
		{
			name: "on a priority tie labelSelector beats kind",
			obj:  web,
			pps: []*policyv1alpha1.PropagationPolicy{
				policy("a-kind", byKind()).priority(2).pp("apps"),
				policy("b-label", byLabel("app", "web")).priority(2).pp("apps"),
			},
			want:   Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "b-label", Priority: 2, MatchLevel: MatchByLabelSelector},
			wantOK: true,
		},
		{
			name: "a policy's best selector sets its level",
			obj:  web,
			pps: []*policyv1alpha1.PropagationPolicy{
				policy("a-label", byLabel("app", "web")).pp("apps"),
				policy("b-mixed", byKind(), byName("web")).pp("apps"),
			},
			want:   Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "b-mixed", MatchLevel: MatchByName},
			wantOK: true,
		},
		{
			name: "on a full tie the alphabetically first name wins",
			obj:  web,
			pps: []*policyv1alpha1.PropagationPolicy{
				policy("zeta", byKind()).pp("apps"),
				policy("alpha", byKind()).pp("apps"),
				policy("mid", byKind()).pp("apps"),
			},
			want:   Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "alpha", MatchLevel: MatchByKind},
			wantOK: true,
		},
		{
			name: "nil priority counts as zero",
			obj:  web,
			pps: []*policyv1alpha1.PropagationPolicy{
				policy("a-negative", byName("web")).priority(-1).pp("apps"),
				policy("b-unset", byKind()).pp("apps"),
			},
			want:   Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "b-unset", MatchLevel: MatchByKind},
			wantOK: true,
		},
		{
			name:   "a PP wins over a CPP of higher priority",
			obj:    web,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("pp", byKind()).pp("apps")},
			cpps:   []*policyv1alpha1.ClusterPropagationPolicy{policy("cpp", byName("web")).priority(100).cpp()},
			want:   Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "pp", MatchLevel: MatchByKind},
			wantOK: true,
		},
		{
			name: "CPP applies when no PP matches, with the same ranking",
			obj:  web,
			pps:  []*policyv1alpha1.PropagationPolicy{policy("pp-other", byName("api")).pp("apps")},
			cpps: []*policyv1alpha1.ClusterPropagationPolicy{
				policy("cpp-low", byName("web")).priority(1).cpp(),
				policy("cpp-high-b", byKind()).priority(3).cpp(),
				policy("cpp-high-a", byKind()).priority(3).cpp(),
			},
			want:   Claim{Kind: KindClusterPropagationPolicy, Name: "cpp-high-a", Priority: 3, MatchLevel: MatchByKind},
			wantOK: true,
		},
		{
			name:   "a PP in another namespace never matches",
			obj:    web,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("elsewhere", byName("web")).priority(10).pp("other")},
			wantOK: false,
		},
		{
			name: "a PP selector naming another namespace never matches",
			obj:  web,
			pps: []*policyv1alpha1.PropagationPolicy{
				policy("pp", inNamespace(byName("web"), "other")).pp("apps"),
			},
			cpps:   []*policyv1alpha1.ClusterPropagationPolicy{policy("cpp", byKind()).cpp()},
			want:   Claim{Kind: KindClusterPropagationPolicy, Name: "cpp", MatchLevel: MatchByKind},
			wantOK: true,
		},
		{
			name:   "a PP selector without namespace defaults to the policy's",
			obj:    web,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("pp", byName("web")).pp("apps")},
			want:   Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "pp", MatchLevel: MatchByName},
			wantOK: true,
		},
		{
			name: "cluster-scoped objects are matched only by CPPs",
			obj:  object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader").obj(),
			pps: []*policyv1alpha1.PropagationPolicy{
				policy("pp", policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}).priority(9).pp("apps"),
			},
			cpps: []*policyv1alpha1.ClusterPropagationPolicy{
				policy("cpp", policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "reader"}).cpp(),
			},
			want:   Claim{Kind: KindClusterPropagationPolicy, Name: "cpp", MatchLevel: MatchByName},
			wantOK: true,
		},
		{
			name: "policies being deleted are skipped",
			obj:  web,
			pps: []*policyv1alpha1.PropagationPolicy{
				policy("going", byName("web")).priority(10).deleting().pp("apps"),
				policy("staying", byKind()).pp("apps"),
			},
			cpps:   []*policyv1alpha1.ClusterPropagationPolicy{policy("cpp-going", byKind()).priority(10).deleting().cpp()},
			want:   Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "staying", MatchLevel: MatchByKind},
			wantOK: true,
		},
		{
			name:   "a deleting PP does not hide CPPs",
			obj:    web,
			pps:    []*policyv1alpha1.PropagationPolicy{policy("going", byKind()).deleting().pp("apps")},
			cpps:   []*policyv1alpha1.ClusterPropagationPolicy{policy("cpp", byKind()).cpp()},
			want:   Claim{Kind: KindClusterPropagationPolicy, Name: "cpp", MatchLevel: MatchByKind},
			wantOK: true,
		},
		{
			name: "the claim carries the permanent ID label of the policy kind",
			obj:  web,
			cpps: []*policyv1alpha1.ClusterPropagationPolicy{
				policy("cpp", byKind()).permanentID(ClusterPropagationPolicyPermanentIDLabel, "id-1").cpp(),
			},
			want:   Claim{Kind: KindClusterPropagationPolicy, Name: "cpp", PermanentID: "id-1", MatchLevel: MatchByKind},
			wantOK: true,
		},
		{
			name:   "nil policies are skipped",
			obj:    web,
			pps:    []*policyv1alpha1.PropagationPolicy{nil},
			cpps:   []*policyv1alpha1.ClusterPropagationPolicy{nil},
			wantOK: false,
		},
		{name: "no policies, no claim", obj: web, wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := BestMatch(tt.obj, tt.pps, tt.cpps)
			if ok != tt.wantOK {
				t.Fatalf("BestMatch() ok = %v, want %v (claim %+v)", ok, tt.wantOK, got)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("BestMatch() claim mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBestMatchIgnoresListOrder(t *testing.T) {
	web := deployment("apps", "web").labels("app", "web").obj()
	a := policy("a", byLabel("app", "web")).priority(1).pp("apps")
	b := policy("b", byName("web")).priority(1).pp("apps")
	c := policy("c", byName("web")).priority(1).pp("apps")
	for _, order := range [][]*policyv1alpha1.PropagationPolicy{{a, b, c}, {c, b, a}, {b, c, a}} {
		got, ok := BestMatch(web, order, nil)
		if !ok || got.Name != "b" {
			t.Errorf("BestMatch(%s, %s, %s) = %q, want \"b\"", order[0].Name, order[1].Name, order[2].Name, got.Name)
		}
	}
}

func TestClaimTemplateMetadata(t *testing.T) {
	tests := []struct {
		name            string
		claim           Claim
		wantLabels      map[string]string
		wantAnnotations map[string]string
	}{
		{
			name:            "PropagationPolicy with permanent ID",
			claim:           Claim{Kind: KindPropagationPolicy, Namespace: "apps", Name: "pp", PermanentID: "id-1"},
			wantLabels:      map[string]string{"propagationpolicy.karmada.io/permanent-id": "id-1"},
			wantAnnotations: map[string]string{"propagationpolicy.karmada.io/name": "pp", "propagationpolicy.karmada.io/namespace": "apps"},
		},
		{
			name:            "ClusterPropagationPolicy with permanent ID",
			claim:           Claim{Kind: KindClusterPropagationPolicy, Name: "cpp", PermanentID: "id-2"},
			wantLabels:      map[string]string{"clusterpropagationpolicy.karmada.io/permanent-id": "id-2"},
			wantAnnotations: map[string]string{"clusterpropagationpolicy.karmada.io/name": "cpp"},
		},
		{
			name:            "no permanent ID, no label",
			claim:           Claim{Kind: KindClusterPropagationPolicy, Name: "cpp"},
			wantAnnotations: map[string]string{"clusterpropagationpolicy.karmada.io/name": "cpp"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.wantLabels, tt.claim.TemplateLabels()); diff != "" {
				t.Errorf("TemplateLabels() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAnnotations, tt.claim.TemplateAnnotations()); diff != "" {
				t.Errorf("TemplateAnnotations() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
