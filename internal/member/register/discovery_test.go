package register

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/cluster-bootstrap/token/jws"
)

func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "test-ca"}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

func TestCACertHashIsTheSHA256OfTheSubjectPublicKeyInfo(t *testing.T) {
	ca := testCA(t)
	certs, err := certutil.ParseCertsPEM(ca)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(certs[0].RawSubjectPublicKeyInfo)
	got, err := CACertHash(ca)
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha256:" + hex.EncodeToString(sum[:]); got != want {
		t.Errorf("CACertHash = %s, want %s", got, want)
	}
	if _, err := CACertHash([]byte("nope")); err == nil {
		t.Error("a non-PEM CA was hashed")
	}
}

func TestControlPlaneURL(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.1:6443":          "https://10.0.0.1:6443",
		"https://cp.example:443": "https://cp.example:443",
		"https://cp.example/":    "https://cp.example",
		"http://cp:80":           "error",
		"https://cp/api":         "error",
		"":                       "error",
	} {
		got, err := ControlPlaneURL(in)
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("ControlPlaneURL(%q) = %q (%v), want %q", in, got, err, want)
		}
	}
}

// clusterInfoServer serves kube-public/cluster-info as a control plane
// does, signed for the token ids in sigs once signed is true.
func clusterInfoServer(t *testing.T, tokenID, tokenSecret string, signed *atomic.Bool) (*httptest.Server, []byte) {
	t.Helper()
	var content string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/kube-public/configmaps/cluster-info" {
			http.NotFound(w, r)
			return
		}
		cm := corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: "cluster-info"}, Data: map[string]string{"kubeconfig": content}}
		if signed.Load() {
			sig, err := jws.ComputeDetachedSignature(content, tokenID, tokenSecret)
			if err != nil {
				t.Error(err)
			}
			cm.Data["jws-kubeconfig-"+tokenID] = sig
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(cm)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	kc, err := clusterInfoKubeconfig(srv.URL, ca)
	if err != nil {
		t.Fatal(err)
	}
	content = string(kc)
	return srv, ca
}

func TestDiscoveryChecksTheTokenSignatureAndTheCA(t *testing.T) {
	const id, secret = "abcdef", "0123456789abcdef"
	var signed atomic.Bool
	srv, ca := clusterInfoServer(t, id, secret, &signed)
	hash, err := CACertHash(ca)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	wrongHash := "sha256:" + strings.Repeat("0", 64)

	t.Run("an unsigned cluster-info means the token is unknown", func(t *testing.T) {
		_, err := discover(ctx, srv.URL, id, secret, []string{hash}, false, 1500*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "flotilla token create") {
			t.Errorf("got %v, want the invalid-token error", err)
		}
	})
	t.Run("discovery waits for the signature", func(t *testing.T) {
		signed.Store(false)
		go func() { time.Sleep(500 * time.Millisecond); signed.Store(true) }()
		d, err := discover(ctx, srv.URL, id, secret, []string{hash}, false, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if d.Server != srv.URL || string(d.CA) != string(ca) {
			t.Errorf("discovered %q %q", d.Server, d.CA)
		}
	})
	signed.Store(true)
	t.Run("a wrong secret is refused at once", func(t *testing.T) {
		_, err := discover(ctx, srv.URL, id, "ffffffffffffffff", []string{hash}, false, 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), "not valid or has expired") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a CA that does not match the hash is refused without printing its hash", func(t *testing.T) {
		_, err := discover(ctx, srv.URL, id, secret, []string{wrongHash}, false, 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), "does not match --discovery-token-ca-cert-hash") || strings.Contains(err.Error(), hash[7:]) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("skipping CA verification accepts any CA", func(t *testing.T) {
		if _, err := discover(ctx, srv.URL, id, secret, nil, true, 10*time.Second); err != nil {
			t.Error(err)
		}
	})
	t.Run("a malformed hash is a usage error", func(t *testing.T) {
		if _, err := discover(ctx, srv.URL, id, secret, []string{"md5:abc"}, false, time.Second); err == nil || !strings.Contains(err.Error(), "--discovery-token-ca-cert-hash") {
			t.Errorf("got %v", err)
		}
	})
}

func TestRegisterValidatesItsInputFirst(t *testing.T) {
	ok := RegisterOptions{ControlPlane: "127.0.0.1:6443", Token: "abcdef.0123456789abcdef", CACertHashes: []string{"sha256:00"}, ClusterName: "member1"}
	for name, tc := range map[string]struct {
		mutate func(*RegisterOptions)
		want   string
	}{
		"an upper-case cluster name":      {func(o *RegisterOptions) { o.ClusterName = "Member1" }, "invalid"},
		"a cluster name of 49 characters": {func(o *RegisterOptions) { o.ClusterName = strings.Repeat("a", 49) }, "at most 48"},
		"no cluster name":                 {func(o *RegisterOptions) { o.ClusterName = "" }, "required"},
		"a token of the wrong form":       {func(o *RegisterOptions) { o.Token = "abc" }, "flotilla token create"},
		"no CA hash and no skip":          {func(o *RegisterOptions) { o.CACertHashes = nil }, "--discovery-token-unsafe-skip-ca-verification"},
		"a plain-http control plane":      {func(o *RegisterOptions) { o.ControlPlane = "http://cp:80" }, "https"},
		"no member cluster configuration": {func(*RegisterOptions) {}, "member cluster's kubeconfig"},
	} {
		t.Run(name, func(t *testing.T) {
			o := ok
			tc.mutate(&o)
			if _, err := Register(context.Background(), o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestAgentKubeconfigEmbedsEverythingInOneContext(t *testing.T) {
	kc, err := AgentKubeconfig("https://cp:6443", []byte("CA"), "member1", []byte("CERT"), []byte("KEY"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseClusterInfo(string(kc))
	if err != nil {
		t.Fatal(err)
	}
	if d.Server != "https://cp:6443" || string(d.CA) != "CA" {
		t.Errorf("cluster %+v", d)
	}
	for _, want := range []string{"client-certificate-data: " + "Q0VSVA==", "client-key-data: S0VZ", "current-context: karmada-agent", "system:karmada:agent:member1"} {
		if !strings.Contains(string(kc), want) {
			t.Errorf("kubeconfig lacks %q:\n%s", want, kc)
		}
	}
}
