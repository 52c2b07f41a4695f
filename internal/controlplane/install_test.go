package controlplane

import (
	"bytes"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	certutil "k8s.io/client-go/util/cert"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func TestObjectsCoverEveryPart(t *testing.T) {
	ca, _, err := certutil.GenerateSelfSignedCertKey("test", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Objects(InstallOptions{
		Server: "https://cp.example:6443", CAPEM: ca,
		Webhook:        &WebhookTarget{URL: "https://127.0.0.1:8443", CABundle: ca},
		MetricsAdapter: &ServiceTarget{Namespace: "karmada-system", Name: "adapter", Port: 443, ExternalName: "127.0.0.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		gvk := o.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			t.Errorf("%T %s has no TypeMeta", o, o.GetName())
		}
		kinds[gvk.Kind]++
		switch o := o.(type) {
		case *rbacv1.ClusterRoleBinding:
			if strings.HasPrefix(o.Name, "flotilla:") && len(o.Subjects) != 2 {
				t.Errorf("binding %s subjects %v: want the ServiceAccount and the user", o.Name, o.Subjects)
			}
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			for _, w := range o.Webhooks {
				if w.ClientConfig.URL == nil || !strings.HasPrefix(*w.ClientConfig.URL, "https://127.0.0.1:8443/mutate-") || len(w.ClientConfig.CABundle) == 0 {
					t.Errorf("webhook %s client config %+v", w.Name, w.ClientConfig)
				}
			}
		case *apiregv1.APIService:
			if o.Spec.Service == nil || o.Spec.Service.Name != "adapter" || !o.Spec.InsecureSkipTLSVerify {
				t.Errorf("APIService %s: %+v", o.Name, o.Spec)
			}
		}
	}
	want := map[string]int{"Namespace": 2, "ValidatingWebhookConfiguration": 1, "MutatingWebhookConfiguration": 1, "APIService": 4, "Service": 1, "ConfigMap": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s objects, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
	if kinds["ClusterRole"] < len(Components) {
		t.Errorf("%d ClusterRoles, want one per component at least", kinds["ClusterRole"])
	}

	var buf bytes.Buffer
	if err := PrintObjects(&buf, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "kind: CustomResourceDefinition") || !strings.Contains(buf.String(), "name: karmada-cluster") {
		t.Errorf("the printed stream lacks the CRDs or namespaces")
	}
}

func TestInstallOptionsAreChecked(t *testing.T) {
	for name, o := range map[string]InstallOptions{
		"server without CA":     {Server: "https://x"},
		"webhook without CA":    {Webhook: &WebhookTarget{URL: "https://x:1"}},
		"webhook URL and svc":   {Webhook: &WebhookTarget{URL: "https://x:1", Service: &ServiceTarget{}, CABundle: []byte("x")}},
		"webhook URL not https": {Webhook: &WebhookTarget{URL: "http://x:1", CABundle: []byte("x")}},
	} {
		if _, err := Objects(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := ParseServiceTarget("karmada-system/hook:443"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"hook:443", "ns/hook", "ns/hook:0", "/hook:443"} {
		if _, err := ParseServiceTarget(bad); err == nil {
			t.Errorf("ParseServiceTarget(%q) accepted", bad)
		}
	}
}
