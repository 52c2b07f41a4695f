package register

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestCheckNotJoinedRefusesAMemberJoinedUnderAnotherName(t *testing.T) {
	sa := func(ns, name string) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	for _, tc := range []struct {
		name    string
		objects []*corev1.ServiceAccount
		want    string // "" accepts
	}{
		{name: "a member never joined", want: ""},
		{name: "its own name's credentials (registered again)", objects: []*corev1.ServiceAccount{sa(ClusterSecretNamespace, "karmada-edge-1"), sa(ClusterSecretNamespace, "default")}, want: ""},
		{name: "the impersonator a join or an agent left (no cluster name)", objects: []*corev1.ServiceAccount{sa(ClusterSecretNamespace, "karmada-impersonator")}, want: ""},
		{name: "another namespace's service account", objects: []*corev1.ServiceAccount{sa("kube-system", "karmada-member2")}, want: ""},
		{name: "joined in Push mode as member2", objects: []*corev1.ServiceAccount{sa(ClusterSecretNamespace, "karmada-member2")},
			want: `already joined to a control plane as "member2" (its ServiceAccount karmada-cluster/karmada-member2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, o := range tc.objects {
				if _, err := cs.CoreV1().ServiceAccounts(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			err := checkNotJoined(context.Background(), cs, "edge-1")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
