package integration

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/localstack"
)

// validationCases check the validation controller
// (internal/controller/propagation/validation): an object that fails the
// checks CEL cannot express gets a ValidationFailed Warning naming every
// bad field, and a ValidationSucceeded event once it is fixed.
//
// The stack's control plane runs the FlotillaValidation admission plugin,
// which makes the same check on every create and update (status writes
// cannot change a spec), so no request through the API can store an
// invalid object: the controller is for control planes without the plugin,
// and for objects stored before it was there (an etcd restored from a
// backup, an upgrade from a release whose checks were laxer). The case
// makes such an object the one way left: it writes it into the control
// plane's etcd, as a restore would, and the API server serves it from
// there like any other.
var validationCases = []integrationCase{
	{
		name: "a stored OverridePolicy with a bad label gets ValidationFailed, refuses updates that keep it bad, and gets ValidationSucceeded once fixed",
		run: func(e *env) {
			bad := &policyv1alpha1.OverridePolicy{
				TypeMeta:   metav1.TypeMeta{APIVersion: policyv1alpha1.SchemeGroupVersion.String(), Kind: "OverridePolicy"},
				ObjectMeta: metav1.ObjectMeta{Name: "labels", Namespace: e.ns},
				Spec: policyv1alpha1.OverrideSpec{
					ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "none"}},
					OverrideRules: []policyv1alpha1.RuleWithCluster{{
						TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
						Overriders: policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{
							Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"tier": "not a label value!"}}}},
					}},
				},
			}
			// Through the API it is refused, with the field the controller
			// will name.
			const field = "spec.overrideRules[0].overriders.labelsOverrider[0].value"
			if err := e.controlPlane.Create(e.ctx, bad.DeepCopy()); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), field) {
				e.Fatalf("creating the invalid OverridePolicy through the API: %v, want it refused as invalid at %s", err, field)
			}

			e.store("overridepolicies", bad)
			e.waitValidationEvent(bad.Name, corev1.EventTypeWarning, events.ValidationFailed, field, "not a label value!")

			// An update that leaves it invalid is refused too: the only way
			// out is to fix it.
			err := e.controlPlane.Update(e.ctx, withLabel(e.storedOverridePolicy(bad), "touched", "yes"))
			if !apierrors.IsInvalid(err) {
				e.Errorf("an update of the invalid OverridePolicy that keeps the bad label: %v, want it refused as invalid", err)
			}
			update(e, e.controlPlane, bad, func(p *policyv1alpha1.OverridePolicy) {
				p.Spec.OverrideRules[0].Overriders.LabelsOverrider[0].Value = map[string]string{"tier": "frontend"}
			})
			e.waitValidationEvent(bad.Name, corev1.EventTypeNormal, events.ValidationSucceeded, "the spec is valid")
		},
	},
	{
		name: "an OverridePolicy with a mistake CEL sees and one only the plugin sees is refused once, naming both",
		run: func(e *env) {
			bad := &policyv1alpha1.OverridePolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "two-mistakes", Namespace: e.ns},
				Spec: policyv1alpha1.OverrideSpec{
					ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
					OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{
						Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "spec/replicas", Operator: policyv1alpha1.OverriderOpReplace,
							Value: apiextensionsv1.JSON{Raw: []byte("2")}}},
						ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "bad tag!"}},
					}}},
				},
			}
			err := e.controlPlane.Create(e.ctx, bad)
			if !apierrors.IsInvalid(err) {
				e.Fatalf("creating it: %v, want it refused as invalid", err)
			}
			for _, want := range []string{"plaintext[*].path must be a JSON pointer", "bad tag!"} {
				if !strings.Contains(err.Error(), want) {
					e.Errorf("the refusal does not name %q: %v", want, err)
				}
			}
		},
	},
}

// storedOverridePolicy returns the OverridePolicy named like obj as the
// control plane holds it.
func (e *env) storedOverridePolicy(obj *policyv1alpha1.OverridePolicy) *policyv1alpha1.OverridePolicy {
	e.Helper()
	got := &policyv1alpha1.OverridePolicy{}
	if err := e.controlPlane.Get(e.ctx, client.ObjectKeyFromObject(obj), got); err != nil {
		e.Fatal(err)
	}
	return got
}

// withLabel returns p with the label key=value added.
func withLabel(p *policyv1alpha1.OverridePolicy, key, value string) *policyv1alpha1.OverridePolicy {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[key] = value
	return p
}

// waitValidationEvent waits for an event of the validation controller
// (source flotilla-validation) of type and reason on the object name of the
// case's namespace, whose message contains every one of parts.
func (e *env) waitValidationEvent(name, typ, reason string, parts ...string) {
	e.Helper()
	e.waitEventWhere(name, reason, func(ev *corev1.Event) bool {
		return ev.Source.Component == "flotilla-validation" && ev.Type == typ
	}, parts...)
}

// store writes obj (a namespaced custom resource of the control plane,
// its apiVersion and kind set; resource is its plural) straight into the
// control plane's etcd, through etcd's JSON gateway, at the key
// kube-apiserver keeps it under: no admission plugin sees it. The API
// server reads JSON from storage whatever it writes itself.
func (e *env) store(resource string, obj client.Object) {
	e.Helper()
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		e.Fatalf("store %s: the object has no kind", obj.GetName())
	}
	obj.SetUID(types.UID(uuid.NewString()))
	obj.SetCreationTimestamp(metav1.NewTime(time.Now()))
	obj.SetGeneration(1)
	value, err := json.Marshal(obj)
	if err != nil {
		e.Fatal(err)
	}
	key := fmt.Sprintf("/registry/%s/%s/%s/%s", gvk.Group, resource, obj.GetNamespace(), obj.GetName())
	ports, err := localstack.LoadRecordedPorts(theStack.dataDir)
	if err != nil {
		e.Fatal(err)
	}
	ports.AsRecorded = true
	port, err := ports.Port(localstack.ControlPlaneName + "/etcd-client")
	if err != nil {
		e.Fatal(err)
	}
	body, err := json.Marshal(map[string]string{
		"key":   base64.StdEncoding.EncodeToString([]byte(key)),
		"value": base64.StdEncoding.EncodeToString(value),
	})
	if err != nil {
		e.Fatal(err)
	}
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v3/kv/put", port), bytes.NewReader(body))
	if err != nil {
		e.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.Fatalf("put %s into the control plane's etcd: %v", key, err)
	}
	defer resp.Body.Close()
	if out, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		e.Fatalf("put %s into the control plane's etcd: %s: %s", key, resp.Status, out)
	}
}
