package promotion

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

func object(doc string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(doc)); err != nil {
		panic(err)
	}
	return u
}

func TestTemplate(t *testing.T) {
	tests := []struct {
		name, member, want string
	}{
		{
			name: "a Deployment loses what its member's API server and controllers set, and kubectl's last-applied",
			member: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",
				"uid":"u1","resourceVersion":"42","generation":3,"creationTimestamp":"2026-01-01T00:00:00Z",
				"managedFields":[{"manager":"kubectl"}],"ownerReferences":[{"name":"o"}],
				"labels":{"app":"web"},"annotations":{"deployment.kubernetes.io/revision":"2",
				"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"a"}},
				"spec":{"replicas":2,"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}},
				"status":{"readyReplicas":2}}`,
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",
				"labels":{"app":"web"},"annotations":{"team":"a"}},
				"spec":{"replicas":2,"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`,
		},
		{
			name: "a Service loses its cluster IPs and keeps its node ports",
			member: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},
				"spec":{"type":"NodePort","clusterIP":"10.0.0.7","clusterIPs":["10.0.0.7"],"ports":[{"port":80,"nodePort":30080}]}}`,
			want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},
				"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30080}]}}`,
		},
		{
			name:   "a headless Service keeps clusterIP None",
			member: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"db"},"spec":{"clusterIP":"None","clusterIPs":["None"]}}`,
			want:   `{"apiVersion":"v1","kind":"Service","metadata":{"name":"db"},"spec":{"clusterIP":"None","clusterIPs":["None"]}}`,
		},
		{
			name: "a Job loses its generated selector and labels, on the pods and on itself, and keeps its TTL",
			member: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j",
				"labels":{"batch.kubernetes.io/controller-uid":"u","batch.kubernetes.io/job-name":"j","controller-uid":"u","job-name":"j"}},
				"spec":{"ttlSecondsAfterFinished":60,"selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"u"}},
				"template":{"metadata":{"labels":{"batch.kubernetes.io/controller-uid":"u","batch.kubernetes.io/job-name":"j","controller-uid":"u","job-name":"j","app":"j"}}}}}`,
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},
				"spec":{"ttlSecondsAfterFinished":60,"template":{"metadata":{"labels":{"app":"j"}}}}}`,
		},
		{
			name: "a Job with a manual selector keeps its selector and labels",
			member: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","labels":{"job-name":"j"}},
				"spec":{"manualSelector":true,"selector":{"matchLabels":{"job-name":"j"}},"template":{"metadata":{"labels":{"job-name":"j"}}}}}`,
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","labels":{"job-name":"j"}},
				"spec":{"manualSelector":true,"selector":{"matchLabels":{"job-name":"j"}},"template":{"metadata":{"labels":{"job-name":"j"}}}}}`,
		},
		{
			name: "a PersistentVolumeClaim loses its bound volume and the binder's annotations",
			member: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","annotations":{
				"pv.kubernetes.io/bind-completed":"yes","pv.kubernetes.io/bound-by-controller":"yes","volume.kubernetes.io/selected-node":"n1"}},
				"spec":{"volumeName":"pv-1","resources":{"requests":{"storage":"1Gi"}}},"status":{"phase":"Bound"}}`,
			want: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data"},
				"spec":{"resources":{"requests":{"storage":"1Gi"}}}}`,
		},
		{
			name:   "a Pod loses the node its member's scheduler chose",
			member: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"nodeName":"node-1","containers":[{"name":"c"}]},"status":{"phase":"Running"}}`,
			want:   `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			member := object(tc.member)
			before := member.DeepCopy()
			got := Template(member)
			if diff := cmp.Diff(object(tc.want).Object, got.Object); diff != "" {
				t.Errorf("template (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, member.Object); diff != "" {
				t.Errorf("the member's object was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestPolicyName(t *testing.T) {
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	service := schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	t.Run("two kinds with an object of the same name get different policies", func(t *testing.T) {
		d, s := PolicyName("shop", "web", deploy), PolicyName("shop", "web", service)
		if d == s {
			t.Errorf("Deployment and Service web both get policy %q", d)
		}
		for _, n := range []string{d, s} {
			if !strings.HasPrefix(n, "web-") {
				t.Errorf("policy %q does not start with the object's name", n)
			}
		}
	})
	t.Run("the name is the same every time", func(t *testing.T) {
		if a, b := PolicyName("shop", "web", deploy), PolicyName("shop", "web", deploy); a != b {
			t.Errorf("%q then %q", a, b)
		}
	})
	t.Run("the namespace is part of the hash", func(t *testing.T) {
		if a, b := PolicyName("shop", "web", deploy), PolicyName("", "web", deploy); a == b {
			t.Errorf("namespaced and cluster-scoped names are both %q", a)
		}
	})
	t.Run("a ClusterRole name with ':' and capitals makes a valid lowercase name", func(t *testing.T) {
		n := PolicyName("", "system:Reader", schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"})
		if !strings.HasPrefix(n, "system.reader-") {
			t.Errorf("got %q, want system.reader-<hash>", n)
		}
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("%q: %v", n, errs)
		}
	})
	t.Run("a name of 253 characters is cut, keeping the hash", func(t *testing.T) {
		long := strings.Repeat("a", 253)
		n := PolicyName("shop", long, deploy)
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("%d characters: %v", len(n), errs)
		}
		if suffix := strings.TrimPrefix(PolicyName("shop", "a", deploy), "a"); !strings.HasSuffix(n, suffix) {
			t.Errorf("%q lost the hash %q", n, suffix)
		}
	})
}

func TestPolicies(t *testing.T) {
	target := Target{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	pp := PropagationPolicy("web-x", "member1", target)
	if pp.Namespace != "shop" || pp.Name != "web-x" || pp.Kind != "PropagationPolicy" {
		t.Errorf("policy %s %s/%s", pp.Kind, pp.Namespace, pp.Name)
	}
	s := pp.Spec
	if s.ConflictResolution != "Overwrite" || s.PreserveResourcesOnDeletion == nil || !*s.PreserveResourcesOnDeletion ||
		len(s.ResourceSelectors) != 1 || s.ResourceSelectors[0].Name != "web" ||
		s.Placement.ClusterAffinity == nil || !cmp.Equal(s.Placement.ClusterAffinity.ClusterNames, []string{"member1"}) {
		t.Errorf("spec %+v", s)
	}
	cpp := ClusterPropagationPolicy("r-x", "member2", Target{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r"})
	if cpp.Namespace != "" || cpp.Kind != "ClusterPropagationPolicy" || cpp.Spec.ConflictResolution != "Overwrite" {
		t.Errorf("cluster policy %+v", cpp)
	}
}
