package register

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

func TestTokensAreMadeListedAndDeletedAsKubeadmDoes(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "unrelated"}, Type: corev1.SecretTypeOpaque})
	token, err := CreateToken(ctx, cs, time.Hour, "for member4")
	if err != nil {
		t.Fatal(err)
	}
	if !bootstraputil.IsValidBootstrapToken(token) {
		t.Fatalf("CreateToken returned %q, not a bootstrap token", token)
	}
	forever, err := CreateToken(ctx, cs, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	id := token[:6]
	s, err := cs.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+id, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Type != bootstrapapi.SecretTypeBootstrapToken {
		t.Errorf("Secret type %q", s.Type)
	}
	for k, want := range map[string]string{"token-id": id, "token-secret": token[7:], "usage-bootstrap-authentication": "true",
		"usage-bootstrap-signing": "true", "auth-extra-groups": BootstrapGroup, "description": "for member4"} {
		if got := string(s.Data[k]); got != want {
			t.Errorf("Secret data %s = %q, want %q", k, got, want)
		}
	}
	exp, err := time.Parse(time.RFC3339, string(s.Data["expiration"]))
	if err != nil || time.Until(exp) < 55*time.Minute || time.Until(exp) > 61*time.Minute {
		t.Errorf("expiration %q is not an hour from now (%v)", s.Data["expiration"], err)
	}

	tokens, err := ListTokens(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 2 {
		t.Fatalf("ListTokens gave %d tokens, want 2: %+v", len(tokens), tokens)
	}
	for _, tok := range tokens {
		if diff := cmp.Diff([]string{"authentication", "signing"}, tok.Usages); diff != "" {
			t.Errorf("usages (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{BootstrapGroup}, tok.ExtraGroups); diff != "" {
			t.Errorf("extra groups (-want +got):\n%s", diff)
		}
		switch tok.Token {
		case token:
			if tok.Expires == nil || tok.Description != "for member4" {
				t.Errorf("token with a TTL listed as %+v", tok)
			}
		case forever:
			if tok.Expires != nil {
				t.Errorf("a token with TTL 0 expires at %v", tok.Expires)
			}
		default:
			t.Errorf("unexpected token %+v", tok)
		}
	}

	if err := DeleteToken(ctx, cs, token); err != nil {
		t.Fatalf("delete by token: %v", err)
	}
	if err := DeleteToken(ctx, cs, forever[:6]); err != nil {
		t.Fatalf("delete by id: %v", err)
	}
	if err := DeleteToken(ctx, cs, forever[:6]); err == nil || !strings.Contains(err.Error(), "no bootstrap token with id") {
		t.Errorf("deleting a missing token: %v", err)
	}
	if err := DeleteToken(ctx, cs, "not a token"); err == nil || !strings.Contains(err.Error(), "neither a bootstrap token") {
		t.Errorf("deleting garbage: %v", err)
	}
	if _, err := CreateToken(ctx, cs, -time.Second, ""); err == nil {
		t.Error("a negative TTL was accepted")
	}
}

func TestEnsureControlPlaneIsIdempotentAndKeepsSignatures(t *testing.T) {
	ctx := context.Background()
	ca := testCA(t)
	stale := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: BootstrapBindingName},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "something-else"}}
	cs := fake.NewClientset(stale)
	if err := EnsureControlPlane(ctx, cs, "https://127.0.0.1:6443", ca); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("kube-public").Get(ctx, "cluster-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseClusterInfo(cm.Data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	if d.Server != "https://127.0.0.1:6443" || string(d.CA) != string(ca) {
		t.Errorf("cluster-info holds server %q and CA %q", d.Server, d.CA)
	}
	// The bootstrapsigner's signatures survive a change of server.
	cm.Data["jws-kubeconfig-abcdef"] = "signature"
	if _, err := cs.CoreV1().ConfigMaps("kube-public").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := EnsureControlPlane(ctx, cs, "https://10.0.0.1:6443", ca); err != nil {
		t.Fatal(err)
	}
	cm, _ = cs.CoreV1().ConfigMaps("kube-public").Get(ctx, "cluster-info", metav1.GetOptions{})
	if cm.Data["jws-kubeconfig-abcdef"] != "signature" || !strings.Contains(cm.Data["kubeconfig"], "https://10.0.0.1:6443") {
		t.Errorf("cluster-info after a second run: %v", cm.Data)
	}
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, BootstrapBindingName, metav1.GetOptions{})
	if err != nil || crb.RoleRef.Name != "system:node-bootstrapper" || len(crb.Subjects) != 1 || crb.Subjects[0].Name != BootstrapGroup {
		t.Errorf("a binding with another roleRef was not replaced: %+v (%v)", crb, err)
	}
	if err := EnsureControlPlane(ctx, cs, "", ca); err == nil {
		t.Error("an empty server was accepted")
	}
	if err := EnsureControlPlane(ctx, cs, "https://x", []byte("not PEM")); err == nil {
		t.Error("a CA that is not PEM was accepted")
	}
}
