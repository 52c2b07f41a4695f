package agentcsrapproving

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/flotilla-io/flotilla/internal/member/register"
)

// Request is a CertificateSigningRequest recognized as an agent's.
type Request struct {
	// Cluster is the member the certificate is for: the CN's suffix after
	// system:karmada:agent:.
	Cluster string
	// Subresource is the certificatesigningrequests subresource whose
	// create permission the requester needs: selfagentclient when the
	// requester is the agent itself (renewal), else agentclient (a first
	// request, with a bootstrap token).
	Subresource string
}

// allowedUsages are the key usages an agent certificate may carry.
var allowedUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}

// Recognize decides whether csr is an agent certificate request this
// controller may approve, as kube's csrapproving recognizes kubelet client
// certificates: signer kubernetes.io/kube-apiserver-client; a PEM
// "CERTIFICATE REQUEST" whose subject CN is system:karmada:agent:<cluster>
// (cluster a valid Cluster name), signed by its key, and whose O is exactly
// [system:karmada:agents]; no DNS, e-mail, IP or URI names; usages that
// include client auth and are among digital signature, key encipherment
// and client auth. The error says why csr is not one (the controller
// leaves such CSRs alone). It does not look at approval conditions.
func Recognize(csr *certificatesv1.CertificateSigningRequest) (Request, error) {
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return Request{}, fmt.Errorf("signer %q is not %s", csr.Spec.SignerName, certificatesv1.KubeAPIServerClientSignerName)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return Request{}, fmt.Errorf("spec.request is not a PEM CERTIFICATE REQUEST")
	}
	x, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return Request{}, fmt.Errorf("spec.request cannot be parsed: %w", err)
	}
	if err := x.CheckSignature(); err != nil {
		return Request{}, fmt.Errorf("spec.request is not signed by its own key: %w", err)
	}
	cn := x.Subject.CommonName
	if !strings.HasPrefix(cn, register.AgentUserPrefix) {
		return Request{}, fmt.Errorf("subject CN %q does not start with %s", cn, register.AgentUserPrefix)
	}
	cluster := strings.TrimPrefix(cn, register.AgentUserPrefix)
	if err := register.ValidateClusterName(cluster); err != nil {
		return Request{}, fmt.Errorf("subject CN %q: %w", cn, err)
	}
	if !slices.Equal(x.Subject.Organization, []string{register.AgentGroup}) {
		return Request{}, fmt.Errorf("subject O %q is not exactly [%s]", x.Subject.Organization, register.AgentGroup)
	}
	if len(x.DNSNames)+len(x.EmailAddresses)+len(x.IPAddresses)+len(x.URIs) > 0 {
		return Request{}, fmt.Errorf("the request has subject alternative names; an agent certificate has none")
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return Request{}, fmt.Errorf("usages %q lack %q", csr.Spec.Usages, certificatesv1.UsageClientAuth)
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowedUsages, u) {
			return Request{}, fmt.Errorf("usage %q is not one of %q", u, allowedUsages)
		}
	}
	sub := register.AgentClientSubresource
	if csr.Spec.Username == cn {
		sub = register.SelfAgentClientSubresource
	}
	return Request{Cluster: cluster, Subresource: sub}, nil
}

// decided reports whether csr already carries an Approved or Denied
// condition.
func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}
