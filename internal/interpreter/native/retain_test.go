package native

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRetain(t *testing.T) {
	tests := []struct {
		name     string
		desired  string
		observed string
		want     string
	}{
		{
			name: "a Job keeps the selector and pod labels its member generated, so a label change can be applied",
			desired: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"report","labels":{"app":"report","run":"2"}},
				"spec":{"backoffLimit":0,"template":{"metadata":{"labels":{"app":"report"}},"spec":{"restartPolicy":"Never"}}}}`,
			observed: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"report","labels":{"app":"report"}},
				"spec":{"backoffLimit":0,"selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"m1"}},
				"template":{"metadata":{"labels":{"app":"report","batch.kubernetes.io/controller-uid":"m1",
				"batch.kubernetes.io/job-name":"report","controller-uid":"m1","job-name":"report"}},
				"spec":{"restartPolicy":"Never"}}}}`,
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"report","labels":{"app":"report","run":"2"}},
				"spec":{"backoffLimit":0,"selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"m1"}},
				"template":{"metadata":{"labels":{"app":"report","batch.kubernetes.io/controller-uid":"m1",
				"batch.kubernetes.io/job-name":"report","controller-uid":"m1","job-name":"report"}},
				"spec":{"restartPolicy":"Never"}}}}`,
		},
		{
			name: "a Deployment labelled retain-replicas keeps the count its member's HPA set",
			desired: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web",
				"labels":{"resourcetemplate.karmada.io/retain-replicas":"true"}},"spec":{"replicas":2}}`,
			observed: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":7}}`,
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web",
				"labels":{"resourcetemplate.karmada.io/retain-replicas":"true"}},"spec":{"replicas":7}}`,
		},
		{
			name: "a Deployment without the label, or with another value, takes the template's count",
			desired: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web",
				"labels":{"resourcetemplate.karmada.io/retain-replicas":"false"}},"spec":{"replicas":2}}`,
			observed: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":7}}`,
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web",
				"labels":{"resourcetemplate.karmada.io/retain-replicas":"false"}},"spec":{"replicas":2}}`,
		},
		{
			name: "a StatefulSet labelled retain-replicas keeps its member's count too",
			desired: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db",
				"labels":{"resourcetemplate.karmada.io/retain-replicas":"true"}},"spec":{"replicas":1}}`,
			observed: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},"spec":{"replicas":3}}`,
			want: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db",
				"labels":{"resourcetemplate.karmada.io/retain-replicas":"true"}},"spec":{"replicas":3}}`,
		},
		{
			name: "a Service keeps the cluster IPs and health-check node port its member allocated",
			desired: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"type":"LoadBalancer",
				"externalTrafficPolicy":"Local","healthCheckNodePort":31000,"ports":[{"name":"http","port":80,"nodePort":30080}]}}`,
			observed: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"type":"LoadBalancer",
				"externalTrafficPolicy":"Local","healthCheckNodePort":32123,"clusterIP":"10.96.4.4","clusterIPs":["10.96.4.4"],
				"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","ports":[{"name":"http","port":80,"nodePort":30080}]}}`,
			want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"type":"LoadBalancer",
				"externalTrafficPolicy":"Local","healthCheckNodePort":32123,"clusterIP":"10.96.4.4","clusterIPs":["10.96.4.4"],
				"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","ports":[{"name":"http","port":80,"nodePort":30080}]}}`,
		},
		{
			name: "a Service becoming ExternalName, or losing its health check, does not keep what it no longer has",
			desired: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},
				"spec":{"type":"ExternalName","externalName":"example.com","ipFamilies":["IPv4"]}}`,
			observed: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"type":"LoadBalancer",
				"externalTrafficPolicy":"Local","healthCheckNodePort":32123,"clusterIP":"10.96.4.4","clusterIPs":["10.96.4.4"],
				"ipFamilies":["IPv6"],"ipFamilyPolicy":"SingleStack"}}`,
			want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},
				"spec":{"type":"ExternalName","externalName":"example.com","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack"}}`,
		},
		{
			name: "a Service leaves node ports to the member's API server, which keeps them by port name",
			desired: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"np"},
				"spec":{"type":"NodePort","ports":[{"name":"http","port":80}]}}`,
			observed: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"np"},
				"spec":{"type":"NodePort","clusterIP":"10.96.0.9","ports":[{"name":"http","port":80,"nodePort":30111}]}}`,
			want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"np"},
				"spec":{"type":"NodePort","clusterIP":"10.96.0.9","ports":[{"name":"http","port":80}]}}`,
		},
		{
			name: "a Pod keeps the node, account, volumes and mounts its member gave it, and takes the new image",
			desired: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"v":"2"}},"spec":{
				"serviceAccountName":"default","volumes":[{"name":"kube-api-access-cp","projected":{}}],
				"initContainers":[{"name":"init","image":"busybox"}],
				"containers":[{"name":"c","image":"nginx:2","volumeMounts":[{"name":"kube-api-access-cp","mountPath":"/var/run"}]},
				{"name":"sidecar","image":"envoy"}]}}`,
			observed: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"v":"1"}},"spec":{
				"nodeName":"node-2","serviceAccountName":"default","volumes":[{"name":"kube-api-access-m1","projected":{}}],
				"initContainers":[{"name":"init","image":"busybox","volumeMounts":[{"name":"kube-api-access-m1","mountPath":"/var/run"}]}],
				"containers":[{"name":"c","image":"nginx:1","volumeMounts":[{"name":"kube-api-access-m1","mountPath":"/var/run"}]},
				{"name":"sidecar","image":"envoy"}]}}`,
			want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"v":"2"}},"spec":{
				"nodeName":"node-2","serviceAccountName":"default","volumes":[{"name":"kube-api-access-m1","projected":{}}],
				"initContainers":[{"name":"init","image":"busybox","volumeMounts":[{"name":"kube-api-access-m1","mountPath":"/var/run"}]}],
				"containers":[{"name":"c","image":"nginx:2","volumeMounts":[{"name":"kube-api-access-m1","mountPath":"/var/run"}]},
				{"name":"sidecar","image":"envoy"}]}}`,
		},
		{
			name: "a ServiceAccount sends its own secrets first, then the ones its member added",
			desired: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"builder"},
				"secrets":[{"name":"registry"}],"imagePullSecrets":[{"name":"pull"}]}`,
			observed: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"builder"},
				"secrets":[{"name":"builder-token-m1"},{"name":"registry"}],"imagePullSecrets":[{"name":"member-pull"}]}`,
			want: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"builder"},
				"secrets":[{"name":"registry"},{"name":"builder-token-m1"}],"imagePullSecrets":[{"name":"pull"}]}`,
		},
		{
			name: "a service-account token Secret keeps the token its member's controller filled in",
			desired: `{"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/service-account-token",
				"metadata":{"name":"tok","annotations":{"kubernetes.io/service-account.name":"builder"}}}`,
			observed: `{"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/service-account-token",
				"metadata":{"name":"tok"},"data":{"token":"bTE="}}`,
			want: `{"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/service-account-token",
				"metadata":{"name":"tok","annotations":{"kubernetes.io/service-account.name":"builder"}},"data":{"token":"bTE="}}`,
		},
		{
			name:     "an ordinary Secret sends the template's data only",
			desired:  `{"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{"name":"s"}}`,
			observed: `{"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{"name":"s"},"data":{"old":"dg=="}}`,
			want:     `{"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{"name":"s"}}`,
		},
		{
			name: "a PersistentVolumeClaim keeps the volume its member bound it to",
			desired: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data"},
				"spec":{"accessModes":["ReadWriteOnce"]}}`,
			observed: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data"},
				"spec":{"accessModes":["ReadWriteOnce"],"volumeName":"pvc-m1"}}`,
			want: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data"},
				"spec":{"accessModes":["ReadWriteOnce"],"volumeName":"pvc-m1"}}`,
		},
		{
			name: "a PersistentVolume keeps the claim its member bound it to",
			desired: `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv1"},
				"spec":{"capacity":{"storage":"1Gi"}}}`,
			observed: `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv1"},
				"spec":{"capacity":{"storage":"1Gi"},"claimRef":{"namespace":"t","name":"data","uid":"m1"}}}`,
			want: `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv1"},
				"spec":{"capacity":{"storage":"1Gi"},"claimRef":{"namespace":"t","name":"data","uid":"m1"}}}`,
		},
		{
			name:     "a kind without rules is sent as desired",
			desired:  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":3}}`,
			observed: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1,"paused":true}}`,
			want:     `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":3}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			desired, observed := manifest(tc.desired), manifest(tc.observed)
			got, err := Retain(desired, observed)
			if err != nil {
				t.Fatalf("Retain: %v", err)
			}
			if diff := cmp.Diff(manifest(tc.want).Object, got.Object); diff != "" {
				t.Errorf("Retain (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(manifest(tc.desired).Object, desired.Object); diff != "" {
				t.Errorf("Retain modified desired (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(manifest(tc.observed).Object, observed.Object); diff != "" {
				t.Errorf("Retain modified observed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestRetainNamesTheFieldOfAWrongShape(t *testing.T) {
	desired := manifest(`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data"},"spec":"oops"}`)
	observed := manifest(`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data"},"spec":{"volumeName":"pvc-m1"}}`)
	_, err := Retain(desired, observed)
	if err == nil || !strings.Contains(err.Error(), "spec.volumeName") || !strings.Contains(err.Error(), "PersistentVolumeClaim") {
		t.Fatalf("Retain error = %v, want one naming spec.volumeName of the PersistentVolumeClaim", err)
	}
}
