package native

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// manifest decodes a whole object from JSON the way an unstructured decoder does.
func manifest(doc string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(doc)); err != nil {
		panic(err)
	}
	return u
}

func TestPrune(t *testing.T) {
	tests := []struct {
		name       string
		template   string
		wantPruned string
	}{
		{
			name: "every kind loses the metadata its API server set, and its status",
			template: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"t",
				"uid":"u1","resourceVersion":"9","generation":2,"creationTimestamp":"2024-01-01T00:00:00Z",
				"managedFields":[{"manager":"kubectl"}],"selfLink":"/x","ownerReferences":[{"name":"o"}],
				"finalizers":["f"],"deletionTimestamp":"2024-01-02T00:00:00Z","deletionGracePeriodSeconds":30,
				"labels":{"app":"c"},"annotations":{"note":"kept"}},
				"data":{"k":"v"},"status":{"x":1}}`,
			wantPruned: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"t",
				"labels":{"app":"c"},"annotations":{"note":"kept"}},"data":{"k":"v"}}`,
		},
		{
			name: "a Deployment loses its controller's revision annotations",
			template: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","annotations":{
				"deployment.kubernetes.io/revision":"3","deployment.kubernetes.io/revision-history":"1,2","team":"a"}},
				"spec":{"replicas":2}}`,
			wantPruned: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","annotations":{"team":"a"}},
				"spec":{"replicas":2}}`,
		},
		{
			name: "a Job loses its TTL and the selector and pod labels generated from its uid",
			template: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"report","labels":{"app":"report"}},
				"spec":{"ttlSecondsAfterFinished":30,"backoffLimit":0,
				"selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"u1"}},
				"template":{"metadata":{"labels":{"app":"report","batch.kubernetes.io/controller-uid":"u1",
				"batch.kubernetes.io/job-name":"report","controller-uid":"u1","job-name":"report"}},
				"spec":{"restartPolicy":"Never"}}}}`,
			wantPruned: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"report","labels":{"app":"report"}},
				"spec":{"backoffLimit":0,"template":{"metadata":{"labels":{"app":"report"}},
				"spec":{"restartPolicy":"Never"}}}}`,
		},
		{
			name: "a Job with a manual selector keeps it, and its pod labels, but not its TTL",
			template: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"m"},
				"spec":{"manualSelector":true,"ttlSecondsAfterFinished":5,
				"selector":{"matchLabels":{"controller-uid":"mine"}},
				"template":{"metadata":{"labels":{"controller-uid":"mine","job-name":"m"}}}}}`,
			wantPruned: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"m"},
				"spec":{"manualSelector":true,"selector":{"matchLabels":{"controller-uid":"mine"}},
				"template":{"metadata":{"labels":{"controller-uid":"mine","job-name":"m"}}}}}`,
		},
		{
			name: "a generated Job selector with expressions keeps the expressions",
			template: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"e"},
				"spec":{"selector":{"matchLabels":{"controller-uid":"u"},"matchExpressions":[{"key":"a","operator":"Exists"}]}}}`,
			wantPruned: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"e"},
				"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Exists"}]}}}`,
		},
		{
			name: "a service-account token Secret loses its token and the account's uid",
			template: `{"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/service-account-token",
				"metadata":{"name":"tok","annotations":{"kubernetes.io/service-account.name":"builder",
				"kubernetes.io/service-account.uid":"u1"}},"data":{"token":"Y3A="}}`,
			wantPruned: `{"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/service-account-token",
				"metadata":{"name":"tok","annotations":{"kubernetes.io/service-account.name":"builder"}}}`,
		},
		{
			name: "an ordinary Secret keeps its data",
			template: `{"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{"name":"s",
				"annotations":{"kubernetes.io/service-account.uid":"not-a-token"}},"data":{"k":"dg=="}}`,
			wantPruned: `{"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{"name":"s",
				"annotations":{"kubernetes.io/service-account.uid":"not-a-token"}},"data":{"k":"dg=="}}`,
		},
		{
			name: "a ServiceAccount loses the token Secrets generated for it and keeps the others",
			template: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"builder"},
				"secrets":[{"name":"builder-token-x7f2k"},{"name":"registry"}],"imagePullSecrets":[{"name":"pull"}]}`,
			wantPruned: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"builder"},
				"secrets":[{"name":"registry"}],"imagePullSecrets":[{"name":"pull"}]}`,
		},
		{
			name:       "a ServiceAccount with only generated token Secrets sends no secrets",
			template:   `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"b"},"secrets":[{"name":"b-token-abc"}]}`,
			wantPruned: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"b"}}`,
		},
		{
			name: "a Service loses the cluster IPs the control plane allocated, and keeps its node ports",
			template: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"type":"NodePort",
				"clusterIP":"10.96.0.7","clusterIPs":["10.96.0.7"],"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack",
				"ports":[{"name":"http","port":80,"nodePort":30080}]}}`,
			wantPruned: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"type":"NodePort",
				"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","ports":[{"name":"http","port":80,"nodePort":30080}]}}`,
		},
		{
			name: "a headless Service stays headless",
			template: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"db"},
				"spec":{"clusterIP":"None","clusterIPs":["None"]}}`,
			wantPruned: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"db"},
				"spec":{"clusterIP":"None","clusterIPs":["None"]}}`,
		},
		{
			name: "a PersistentVolumeClaim loses the node picked for it",
			template: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","annotations":{
				"volume.kubernetes.io/selected-node":"node-1","team":"a"}},"spec":{"accessModes":["ReadWriteOnce"]}}`,
			wantPruned: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","annotations":{"team":"a"}},
				"spec":{"accessModes":["ReadWriteOnce"]}}`,
		},
		{
			name: "a Pod keeps its spec",
			template: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"serviceAccountName":"default",
				"containers":[{"name":"c","image":"busybox"}]},"status":{"phase":"Pending"}}`,
			wantPruned: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"serviceAccountName":"default",
				"containers":[{"name":"c","image":"busybox"}]}}`,
		},
		{
			name: "a custom kind of the same name in another group is not pruned as the built-in one",
			template: `{"apiVersion":"example.io/v1","kind":"Job","metadata":{"name":"x"},
				"spec":{"ttlSecondsAfterFinished":30}}`,
			wantPruned: `{"apiVersion":"example.io/v1","kind":"Job","metadata":{"name":"x"},
				"spec":{"ttlSecondsAfterFinished":30}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := manifest(tc.template)
			Prune(got)
			if diff := cmp.Diff(manifest(tc.wantPruned).Object, got.Object); diff != "" {
				t.Errorf("Prune (-want +got):\n%s", diff)
			}
			again := got.DeepCopy()
			Prune(again)
			if diff := cmp.Diff(got.Object, again.Object); diff != "" {
				t.Errorf("pruning twice changed the object (-once +twice):\n%s", diff)
			}
		})
	}
}
