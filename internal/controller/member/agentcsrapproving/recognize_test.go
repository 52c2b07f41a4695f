package agentcsrapproving

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

// csrBuilder makes agent CSRs; each option spoils one property.
type csrBuilder struct {
	cn       string
	orgs     []string
	dns      []string
	ips      []net.IP
	signer   string
	usages   []certificatesv1.KeyUsage
	username string
	pemType  string
}

func agentCSR() *csrBuilder {
	return &csrBuilder{cn: "system:karmada:agent:member1", orgs: []string{"system:karmada:agents"}, signer: certificatesv1.KubeAPIServerClientSignerName,
		usages:   []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
		username: "system:bootstrap:abcdef", pemType: "CERTIFICATE REQUEST"}
}

func (b *csrBuilder) build(t *testing.T) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: b.cn, Organization: b.orgs}, DNSNames: b.dns, IPAddresses: b.ips}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		Request: pem.EncodeToMemory(&pem.Block{Type: b.pemType, Bytes: der}), SignerName: b.signer, Usages: b.usages, Username: b.username}}
}

func TestRecognize(t *testing.T) {
	for name, tc := range map[string]struct {
		edit    func(*csrBuilder)
		want    Request
		wantErr string
	}{
		"a first request with a bootstrap token needs agentclient": {
			edit: func(*csrBuilder) {}, want: Request{Cluster: "member1", Subresource: "agentclient"}},
		"the agent renewing its own certificate needs selfagentclient": {
			edit: func(b *csrBuilder) { b.username = "system:karmada:agent:member1" }, want: Request{Cluster: "member1", Subresource: "selfagentclient"}},
		"another agent asking for member1's certificate needs agentclient": {
			edit: func(b *csrBuilder) { b.username = "system:karmada:agent:member2" }, want: Request{Cluster: "member1", Subresource: "agentclient"}},
		"digital signature and client auth alone are enough (ECDSA)": {
			edit: func(b *csrBuilder) {
				b.usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
			}, want: Request{Cluster: "member1", Subresource: "agentclient"}},
		"another signer":             {edit: func(b *csrBuilder) { b.signer = certificatesv1.KubeletServingSignerName }, wantErr: "signer"},
		"not PEM":                    {edit: func(b *csrBuilder) { b.pemType = "CERTIFICATE" }, wantErr: "not a PEM CERTIFICATE REQUEST"},
		"a kubelet's CN":             {edit: func(b *csrBuilder) { b.cn = "system:node:n1" }, wantErr: "does not start with"},
		"an invalid cluster name":    {edit: func(b *csrBuilder) { b.cn = "system:karmada:agent:Member_1" }, wantErr: "invalid"},
		"an empty cluster name":      {edit: func(b *csrBuilder) { b.cn = "system:karmada:agent:" }, wantErr: "required"},
		"system:masters as well":     {edit: func(b *csrBuilder) { b.orgs = []string{"system:karmada:agents", "system:masters"} }, wantErr: "not exactly"},
		"no organization":            {edit: func(b *csrBuilder) { b.orgs = nil }, wantErr: "not exactly"},
		"a DNS name":                 {edit: func(b *csrBuilder) { b.dns = []string{"member1.example"} }, wantErr: "subject alternative names"},
		"an IP address":              {edit: func(b *csrBuilder) { b.ips = []net.IP{net.ParseIP("10.0.0.1")} }, wantErr: "subject alternative names"},
		"no client auth":             {edit: func(b *csrBuilder) { b.usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature} }, wantErr: "lack"},
		"server auth besides client": {edit: func(b *csrBuilder) { b.usages = append(b.usages, certificatesv1.UsageServerAuth) }, wantErr: "is not one of"},
	} {
		t.Run(name, func(t *testing.T) {
			b := agentCSR()
			tc.edit(b)
			got, err := Recognize(b.build(t))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("got %+v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecided(t *testing.T) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if decided(csr) {
		t.Error("a new CSR counts as decided")
	}
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue}}
	if decided(csr) {
		t.Error("a Failed condition counts as a decision")
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue})
	if !decided(csr) {
		t.Error("a denied CSR is not decided")
	}
}
