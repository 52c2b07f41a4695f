package execution

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReleasePatchDropsKarmadasMarksAndKeepsTheRest(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetLabels(map[string]string{"app": "web", "karmada.io/managed": "true",
		"resourcebinding.karmada.io/permanent-id": "x", "propagationpolicy.karmada.io/permanent-id": "y"})
	obj.SetAnnotations(map[string]string{"owner": "me", "work.karmada.io/name": "web-1", "work.karmada.io/namespace": "karmada-es-m1",
		"resourcetemplate.karmada.io/uid": "u", "resourcetemplate.karmada.io/managed-labels": "app,karmada.io/managed",
		"propagationpolicy.karmada.io/name": "p"})
	got := string(releasePatch(obj))
	want := `{"metadata":{"annotations":{"propagationpolicy.karmada.io/name":null,"resourcetemplate.karmada.io/managed-labels":null,` +
		`"resourcetemplate.karmada.io/uid":null,"work.karmada.io/name":null,"work.karmada.io/namespace":null},` +
		`"labels":{"karmada.io/managed":null,"propagationpolicy.karmada.io/permanent-id":null,"resourcebinding.karmada.io/permanent-id":null}}}`
	if got != want {
		t.Errorf("patch\n%s\nwant\n%s", got, want)
	}
	plain := &unstructured.Unstructured{}
	plain.SetLabels(map[string]string{"app": "web"})
	if p := releasePatch(plain); p != nil {
		t.Errorf("an object without marks got patch %s", p)
	}
}
