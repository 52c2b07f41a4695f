package agent

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	"github.com/flotilla-io/flotilla/internal/member/register"
)

// selfSigned returns a PEM certificate and key for cn.
func selfSigned(t *testing.T, cn string) (cert, key []byte) {
	t.Helper()
	cert, key, err := certutil.GenerateSelfSignedCertKey(cn, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// The store reads the agent's certificate from the kubeconfig in the
// member's Secret and writes a renewed one back, keeping the server and CA.
func TestSecretStoreRoundTrip(t *testing.T) {
	cert1, key1 := selfSigned(t, "system:karmada:agent:member1")
	raw, err := register.AgentKubeconfig("https://cp.example:6443", []byte("ca-bytes"), "member1", cert1, key1)
	if err != nil {
		t.Fatal(err)
	}
	kube := fake.NewSimpleClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: register.KubeconfigSecretNamespace, Name: register.KubeconfigSecretName},
		Data:       map[string][]byte{register.KubeconfigSecretKey: raw},
	})
	s := &secretStore{kube: kube}
	cur, err := s.Current()
	if err != nil {
		t.Fatal(err)
	}
	if cur.Leaf == nil || !strings.HasPrefix(cur.Leaf.Subject.CommonName, "system:karmada:agent:member1") {
		t.Fatalf("Current() has subject %v", cur.Leaf.Subject)
	}
	cert2, key2 := selfSigned(t, "system:karmada:agent:member1")
	if _, err := s.Update(cert2, key2); err != nil {
		t.Fatal(err)
	}
	sec, err := kube.CoreV1().Secrets(register.KubeconfigSecretNamespace).Get(context.Background(), register.KubeconfigSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data[register.KubeconfigSecretKey])
	if err != nil {
		t.Fatal(err)
	}
	if string(cfg.CertData) != string(cert2) || string(cfg.KeyData) != string(key2) {
		t.Error("Update did not store the renewed certificate and key")
	}
	if cfg.Host != "https://cp.example:6443" || string(cfg.CAData) != "ca-bytes" {
		t.Errorf("Update lost the server or CA: %s %q", cfg.Host, cfg.CAData)
	}
	if again, err := s.Current(); err != nil || again.Leaf.SerialNumber.Cmp(cur.Leaf.SerialNumber) == 0 {
		t.Errorf("Current() after Update still returns the old certificate (err %v)", err)
	}

	// A pair that does not match is refused and nothing is written.
	_, otherKey := selfSigned(t, "other")
	if _, err := s.Update(cert1, otherKey); err == nil {
		t.Error("Update accepted a certificate with another certificate's key")
	}
}
