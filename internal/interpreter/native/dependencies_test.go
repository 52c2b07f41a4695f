package native

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func workloadObject(doc string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(doc)); err != nil {
		panic(err)
	}
	return u
}

func TestDependencies(t *testing.T) {
	tests := []struct {
		name, workload string
		want           []Dependency
	}{
		{
			name: "a Deployment's volumes, env, envFrom, pull secrets and service account, each once and sorted",
			workload: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{
				"serviceAccountName":"web-sa","imagePullSecrets":[{"name":"regcred"}],
				"volumes":[{"name":"a","configMap":{"name":"web-config"}},{"name":"b","secret":{"secretName":"tls"}},
					{"name":"c","persistentVolumeClaim":{"claimName":"data"}},
					{"name":"d","projected":{"sources":[{"configMap":{"name":"extra"}},{"secret":{"name":"token"}}]}},
					{"name":"e","emptyDir":{}}],
				"initContainers":[{"name":"i","envFrom":[{"configMapRef":{"name":"init-env"}}]}],
				"containers":[{"name":"c","env":[{"name":"X","valueFrom":{"configMapKeyRef":{"name":"web-config","key":"x"}}},
					{"name":"Y","valueFrom":{"secretKeyRef":{"name":"db-pass","key":"y"}}},{"name":"Z","value":"z"}],
					"envFrom":[{"secretRef":{"name":"env-secret"}}]}]}}}}`,
			want: []Dependency{
				{Kind: "ConfigMap", Name: "extra"}, {Kind: "ConfigMap", Name: "init-env"}, {Kind: "ConfigMap", Name: "web-config"},
				{Kind: "PersistentVolumeClaim", Name: "data"},
				{Kind: "Secret", Name: "db-pass"}, {Kind: "Secret", Name: "env-secret"}, {Kind: "Secret", Name: "regcred"}, {Kind: "Secret", Name: "tls"}, {Kind: "Secret", Name: "token"},
				{Kind: "ServiceAccount", Name: "web-sa"},
			},
		},
		{
			name:     "the default service account is every namespace's own and is not a dependency",
			workload: `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},"spec":{"template":{"spec":{"serviceAccountName":"default","containers":[{"name":"c"}]}}}}`,
			want:     []Dependency{},
		},
		{
			name:     "a StatefulSet's governing Service",
			workload: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},"spec":{"serviceName":"db-headless","template":{"spec":{"containers":[{"name":"c"}]}}}}`,
			want:     []Dependency{{Kind: "Service", Name: "db-headless"}},
		},
		{
			name:     "a ServiceImport's derived Service and imported EndpointSlices",
			workload: `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ServiceImport","metadata":{"name":"web"},"spec":{"type":"ClusterSetIP"}}`,
			want: []Dependency{{Kind: "Service", Name: "derived-web"},
				{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Selector: "kubernetes.io/service-name=derived-web"}},
		},
		{
			name:     "a Headless ServiceImport has no derived Service, only imported EndpointSlices",
			workload: `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ServiceImport","metadata":{"name":"db"},"spec":{"type":"Headless"}}`,
			want:     []Dependency{{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Selector: "kubernetes.io/service-name=derived-db"}},
		},
		{
			name:     "a CronJob's pod template is two levels down",
			workload: `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cj"},"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","envFrom":[{"configMapRef":{"name":"cj-env"}}]}]}}}}}}`,
			want:     []Dependency{{Kind: "ConfigMap", Name: "cj-env"}},
		},
		{
			name:     "a Pod's spec, with the deprecated serviceAccount field",
			workload: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"serviceAccount":"old-sa","containers":[{"name":"c"}]}}`,
			want:     []Dependency{{Kind: "ServiceAccount", Name: "old-sa"}},
		},
		{
			name:     "a ConfigMap is not a workload and has none",
			workload: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"b"}}`,
			want:     nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Dependencies(workloadObject(tc.workload))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("dependencies (-want +got):\n%s", diff)
			}
		})
	}
}
