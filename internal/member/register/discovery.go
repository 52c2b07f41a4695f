package register

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kubeadm/app/util/pubkeypin"
)

// CACertHash is kubeadm's discovery-token-ca-cert-hash of the first
// certificate in caPEM: "sha256:" and the lower-case hex SHA-256 of its
// DER SubjectPublicKeyInfo (RFC 7469 pinning). Errors: caPEM holds no
// certificate.
func CACertHash(caPEM []byte) (string, error) {
	certs, err := certutil.ParseCertsPEM(caPEM)
	if err != nil {
		return "", fmt.Errorf("read the CA certificate: %w", err)
	}
	return pubkeypin.Hash(certs[0]), nil
}

// caHashHelp says how to get the right --discovery-token-ca-cert-hash.
const caHashHelp = "print it on the control plane with 'flotilla token create --print-register-command', or compute it from the CA certificate with " +
	"'openssl x509 -pubkey -in ca.crt | openssl pkey -pubin -outform der | openssl dgst -sha256' (prefix the hex with sha256:)"

// errInvalidToken is what a token without a valid cluster-info signature
// gets.
var errInvalidToken = errors.New("the token is not valid or has expired: create one with 'flotilla token create' on the control plane")

// ControlPlaneURL turns karmadactl register's control-plane argument,
// host:port or an https URL, into an https URL. Errors: empty, another
// scheme, or a path.
func ControlPlaneURL(endpoint string) (string, error) {
	if endpoint == "" {
		return "", fmt.Errorf("the control plane's address is empty: give its API server as host:port or https://host:port")
	}
	raw := endpoint
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not a control plane address: give its API server as host:port or https://host:port", endpoint)
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("%q: the control plane is reached over https, not %s", endpoint, u.Scheme)
	}
	if u.Path != "" && u.Path != "/" {
		return "", fmt.Errorf("%q: the control plane address takes no path: give host:port or https://host:port", endpoint)
	}
	return "https://" + u.Host, nil
}

// discovery is the outcome of token discovery: the control plane as
// cluster-info describes it.
type discovery struct {
	Server string
	CA     []byte
}

// discover reads kube-public/cluster-info from endpoint without trusting
// its certificate, as kubeadm's token discovery does, until the
// bootstrapsigner has signed it for tokenID (bounded by timeout); checks
// the signature with the token's secret, then the CA against pins (unless
// skipCA), then reads cluster-info again over TLS verified with that CA
// and checks it is the same.
func discover(ctx context.Context, endpoint, tokenID, tokenSecret string, pins []string, skipCA bool, timeout time.Duration) (*discovery, error) {
	log := klog.FromContext(ctx)
	pinned := pubkeypin.NewSet()
	if err := pinned.Allow(pins...); err != nil {
		return nil, fmt.Errorf("--discovery-token-ca-cert-hash: %w", err)
	}
	insecure, err := kubernetes.NewForConfig(&rest.Config{Host: endpoint, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	// A token the control plane does not know is refused at once, rather
	// than after waiting for a signature that never comes.
	if tokenSecret != "" {
		withToken, err := kubernetes.NewForConfig(&rest.Config{Host: endpoint, BearerToken: tokenID + "." + tokenSecret,
			TLSClientConfig: rest.TLSClientConfig{Insecure: true}, Timeout: 10 * time.Second})
		if err != nil {
			return nil, err
		}
		if _, err := withToken.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); apierrors.IsUnauthorized(err) {
			return nil, errInvalidToken
		}
	}
	var content string
	var lastErr error
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		cm, err := insecure.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return false, nil // the deadline: keep the last real reason
			}
			lastErr = readClusterInfoError(endpoint, err)
			log.V(1).Info("Waiting for cluster-info", "endpoint", endpoint, "err", err)
			return false, nil
		}
		content = cm.Data[bootstrapapi.KubeConfigKey]
		sig, ok := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+tokenID]
		if !ok {
			// The bootstrapsigner signs a new token a moment after it is
			// created; an unknown or expired token is never signed.
			lastErr = errInvalidToken
			log.V(1).Info("Waiting for the cluster-info signature of the token", "tokenID", tokenID)
			return false, nil
		}
		if content == "" || !jws.DetachedTokenIsValid(sig, content, tokenID, tokenSecret) {
			return false, errInvalidToken
		}
		return true, nil
	})
	if err != nil {
		if lastErr != nil && wait.Interrupted(err) {
			return nil, lastErr
		}
		return nil, err
	}
	d, err := parseClusterInfo(content)
	if err != nil {
		return nil, err
	}
	if !skipCA {
		if err := checkPins(pinned, d.CA); err != nil {
			return nil, err
		}
	}
	// Now that the CA is trusted, read cluster-info again through it: the
	// server must present a certificate of that CA and serve the same
	// content.
	secure, err := kubernetes.NewForConfig(&rest.Config{Host: endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: d.CA}, Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	cm, err := secure.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read kube-public/cluster-info from %s again, trusting the discovered CA: %w", endpoint, err)
	}
	if cm.Data[bootstrapapi.KubeConfigKey] != content {
		return nil, fmt.Errorf("kube-public/cluster-info at %s changed while it was being verified; run the command again", endpoint)
	}
	return d, nil
}

func readClusterInfoError(endpoint string, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("the control plane at %s has no kube-public/cluster-info: prepare it with 'flotilla token create' on the control plane", endpoint)
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return fmt.Errorf("the control plane at %s does not let anonymous users read kube-public/cluster-info (%w): prepare it with 'flotilla token create' on the control plane", endpoint, err)
	}
	return fmt.Errorf("read kube-public/cluster-info from %s: %w (is the address the control plane's API server?)", endpoint, err)
}

// parseClusterInfo reads cluster-info's kubeconfig: it must name exactly
// one cluster, with a server and CA data.
func parseClusterInfo(content string) (*discovery, error) {
	cfg, err := clientcmd.Load([]byte(content))
	if err != nil {
		return nil, fmt.Errorf("the control plane's kube-public/cluster-info holds no kubeconfig: %w", err)
	}
	var cluster *clientcmdapi.Cluster
	for _, c := range cfg.Clusters {
		if cluster != nil {
			return nil, fmt.Errorf("the control plane's kube-public/cluster-info names %d clusters; want one", len(cfg.Clusters))
		}
		cluster = c
	}
	if cluster == nil || cluster.Server == "" || len(cluster.CertificateAuthorityData) == 0 {
		return nil, fmt.Errorf("the control plane's kube-public/cluster-info lacks the server or CA")
	}
	return &discovery{Server: cluster.Server, CA: cluster.CertificateAuthorityData}, nil
}

// checkPins reports whether a certificate of caPEM has a pinned public key.
// The error does not print the key found: a hash copied from an error
// would defeat the pinning.
func checkPins(pinned *pubkeypin.Set, caPEM []byte) error {
	certs, err := certutil.ParseCertsPEM(caPEM)
	if err != nil {
		return fmt.Errorf("the control plane's kube-public/cluster-info CA: %w", err)
	}
	if pinned.CheckAny(certs) != nil {
		return fmt.Errorf("the control plane's CA does not match --discovery-token-ca-cert-hash: %s", caHashHelp)
	}
	return nil
}
