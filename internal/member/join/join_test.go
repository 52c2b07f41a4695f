package join

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

func TestCheckName(t *testing.T) {
	s := runtime.NewScheme()
	_ = clusterv1alpha1.AddToScheme(s)
	existing := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1001", ID: "uid-a"}}
	cp := fake.NewClientBuilder().WithScheme(s).WithObjects(existing).Build()
	cases := []struct {
		name, cluster, host, id string
		refused                 string // "" when accepted
	}{
		{"a new name", "member2", "https://127.0.0.1:1002", "uid-b", ""},
		{"the same cluster at the same address", "member1", "https://127.0.0.1:1001", "uid-a", ""},
		{"the same cluster at a new address", "member1", "https://127.0.0.1:1009", "uid-a", ""},
		{"another cluster under the name", "member1", "https://127.0.0.1:1002", "uid-b", "the name is taken by the cluster at https://127.0.0.1:1001"},
		{"a cluster without an id under the name", "member1", "https://127.0.0.1:1002", "", "the name is taken"},
	}
	for _, c := range cases {
		o := Options{ClusterName: c.cluster, Member: &rest.Config{Host: c.host}}
		err := checkName(context.Background(), cp, o, c.id)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.refused)
		}
	}
}
