package crds_test

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/api/remedy/v1alpha1"
	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// testScheme knows every Flotilla API type, to find the GroupVersionKind of a typed object.
var testScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		appsv1alpha1.AddToScheme,
		autoscalingv1alpha1.AddToScheme,
		clusterv1alpha1.AddToScheme,
		configv1alpha1.AddToScheme,
		networkingv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme,
		remedyv1alpha1.AddToScheme,
		rolloutv1alpha1.AddToScheme,
		workv1alpha1.AddToScheme,
		workv1alpha2.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	return s
}()

// admitTyped sends a typed object through the API server's create path for its CRD, the way a
// client would: serialized to JSON first.
func admitTyped(t *testing.T, as *admitters, obj runtime.Object) admission {
	t.Helper()
	return admitTypedUpdate(t, as, nil, obj)
}

// asJSONMap serializes a typed object as a client would and decodes it as the API server does.
func asJSONMap(t *testing.T, obj runtime.Object) (schema.GroupVersionKind, map[string]interface{}) {
	t.Helper()
	gvks, _, err := testScheme.ObjectKinds(obj)
	if err != nil {
		t.Fatalf("kind of %T: %v", obj, err)
	}
	gvk := gvks[0]
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("encoding %s: %v", gvk.Kind, err)
	}
	// Decode numbers the way the API server does (int64 for integers), which CEL relies on.
	u := map[string]interface{}{}
	if err := utiljson.Unmarshal(data, &u); err != nil {
		t.Fatalf("decoding %s: %v", gvk.Kind, err)
	}
	return gvk, u
}

// admitTypedUpdate sends obj through the API server's update path from old (nil: the create
// path).
func admitTypedUpdate(t *testing.T, as *admitters, old, obj runtime.Object) admission {
	t.Helper()
	gvk, u := asJSONMap(t, obj)
	var oldMap map[string]interface{}
	if old != nil {
		_, oldMap = asJSONMap(t, old)
	}
	a, err := as.forKind(t, gvk)
	if err != nil {
		t.Fatal(err)
	}
	return a.admitUpdate(oldMap, u)
}

// ruleCase is one object and the outcome the API server must give it.
type ruleCase struct {
	name string
	// old, when set, makes the case an update from old to obj (transition rules apply).
	old runtime.Object
	obj runtime.Object
	// wantErr is a substring of an expected error's text (its message, normally); empty
	// means the object must be accepted.
	wantErr string
	// wantField, when set, is the field path the expected error must be reported at.
	wantField string
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	as := newAdmitters(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := admitTypedUpdate(t, as, tc.old, tc.obj)
			if len(got.Pruned) > 0 {
				t.Errorf("the schema dropped fields %v", got.Pruned)
			}
			if tc.wantErr == "" {
				if len(got.Errors) > 0 {
					t.Fatalf("expected the object to be accepted, got:\n%s", errorLines(got))
				}
				return
			}
			if len(got.Errors) == 0 {
				t.Fatalf("expected an error containing %q, the object was accepted", tc.wantErr)
			}
			for _, err := range got.Errors {
				if strings.Contains(err.Error(), tc.wantErr) && (tc.wantField == "" || err.Field == tc.wantField) {
					return
				}
			}
			t.Fatalf("expected an error at %q containing %q, got:\n%s", tc.wantField, tc.wantErr, errorLines(got))
		})
	}
}

func errorLines(a admission) string {
	var lines []string
	for _, err := range a.Errors {
		lines = append(lines, "  "+err.Error())
	}
	return strings.Join(lines, "\n")
}
