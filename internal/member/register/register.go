package register

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net/url"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
	bootstraptokens "k8s.io/cluster-bootstrap/util/tokens"

	"github.com/flotilla-io/flotilla/internal/member/join"
)

// DefaultRegisterTimeout bounds discovery and the wait for approval when
// RegisterOptions.Timeout is 0 (karmadactl register's default).
const DefaultRegisterTimeout = 2 * time.Minute

// maxClusterNameLength is Karmada's limit on Cluster names.
const maxClusterNameLength = 48

// RegisterOptions describe one `flotilla register`.
type RegisterOptions struct {
	// ControlPlane is the control plane's API server, host:port or
	// https://host:port.
	ControlPlane string
	// Token is a bootstrap token "<id>.<secret>" from CreateToken.
	Token string
	// CACertHashes pin the control plane's CA: "sha256:<hex>" as
	// CACertHash prints. At least one is required unless
	// UnsafeSkipCAVerification.
	CACertHashes []string
	// UnsafeSkipCAVerification trusts whatever CA cluster-info names
	// (kubeadm's --discovery-token-unsafe-skip-ca-verification).
	UnsafeSkipCAVerification bool
	// ClusterName is the member's Cluster name on the control plane: a
	// DNS-1123 label of at most 48 characters.
	ClusterName string
	// Member is an admin config of the member cluster, where the
	// credentials Secret is written.
	Member *rest.Config
	// Timeout bounds discovery (waiting for the token's cluster-info
	// signature) and, separately, the wait for the CSR's approval; 0 means
	// DefaultRegisterTimeout.
	Timeout time.Duration
	// CertExpiration, when positive, is the requested lifetime of the
	// agent's certificate (the CSR's spec.expirationSeconds; the signer may
	// shorten it).
	CertExpiration time.Duration
}

// RegisterResult is what Register produced.
type RegisterResult struct {
	// Kubeconfig is the agent's control-plane kubeconfig, also stored in
	// the member's Secret karmada-system/karmada-kubeconfig.
	Kubeconfig []byte
	// CSRName is the CertificateSigningRequest that was approved.
	CSRName string
	// Server is the control plane's URL as cluster-info gives it.
	Server string
}

// Validate checks o before anything is contacted: the cluster name, the
// control plane address, the token's form and the CA pins.
func (o *RegisterOptions) Validate() error {
	if err := ValidateClusterName(o.ClusterName); err != nil {
		return err
	}
	if _, err := ControlPlaneURL(o.ControlPlane); err != nil {
		return err
	}
	if o.Token == "" {
		return fmt.Errorf("a bootstrap token is required: create one with 'flotilla token create' on the control plane")
	}
	if _, _, err := bootstraptokens.ParseToken(o.Token); err != nil {
		return fmt.Errorf("the token is not a bootstrap token (<6 characters [a-z0-9]>.<16 characters [a-z0-9]>): create one with 'flotilla token create' on the control plane")
	}
	if len(o.CACertHashes) == 0 && !o.UnsafeSkipCAVerification {
		return fmt.Errorf("give the control plane's CA hash with --discovery-token-ca-cert-hash (%s), or trust any CA with --discovery-token-unsafe-skip-ca-verification", caHashHelp)
	}
	if o.Member == nil {
		return fmt.Errorf("the member cluster's kubeconfig is required")
	}
	if o.Timeout < 0 || o.CertExpiration < 0 {
		return fmt.Errorf("the timeout and the certificate expiration must not be negative")
	}
	return nil
}

// ValidateClusterName checks a Cluster name as Karmada does: a DNS-1123
// label of at most 48 characters.
func ValidateClusterName(name string) error {
	if name == "" {
		return fmt.Errorf("the cluster name is required")
	}
	if len(name) > maxClusterNameLength {
		return fmt.Errorf("cluster name %q is %d characters long; at most %d are allowed", name, len(name), maxClusterNameLength)
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("cluster name %q is invalid: %s", name, errs[0])
	}
	return nil
}

// Register does what `karmadactl register` does before it deploys the
// agent:
//
//  1. token discovery: reads kube-public/cluster-info from o.ControlPlane,
//     checks the token's JWS signature on it (waiting up to o.Timeout for
//     the bootstrapsigner to add it) and the CA against o.CACertHashes;
//  2. with the bootstrap token, creates a CertificateSigningRequest
//     (ECDSA P-256 key; CN system:karmada:agent:<cluster>, O
//     system:karmada:agents; signer kubernetes.io/kube-apiserver-client;
//     usages digital signature, key encipherment, client auth) and waits up
//     to o.Timeout for it to be approved (the agentcsrapproving controller)
//     and signed;
//  3. writes the agent's kubeconfig (server, CA, client certificate and
//     key embedded; one context) into the member as Secret
//     karmada-system/karmada-kubeconfig, key karmada-kubeconfig, creating
//     the namespace if needed.
//
// Errors say what to do: an invalid token, a CA that does not match, a
// denied CSR (with the control plane's message), or no approval in time.
func Register(ctx context.Context, o RegisterOptions) (*RegisterResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultRegisterTimeout
	}
	endpoint, _ := ControlPlaneURL(o.ControlPlane)
	tokenID, tokenSecret, _ := bootstraptokens.ParseToken(o.Token)
	member, err := kubernetes.NewForConfig(o.Member)
	if err != nil {
		return nil, fmt.Errorf("member cluster client: %w", err)
	}
	// Read the member first (writing nothing until the certificate is
	// issued): one that cannot be reached should not cost a certificate,
	// and one already registered under another name is refused.
	if err := checkMember(ctx, member, o.ClusterName); err != nil {
		return nil, err
	}
	d, err := discover(ctx, endpoint, tokenID, tokenSecret, o.CACertHashes, o.UnsafeSkipCAVerification, timeout)
	if err != nil {
		return nil, err
	}
	if sameServer(o.Member.Host, d.Server) || sameServer(o.Member.Host, endpoint) {
		return nil, fmt.Errorf("the cluster being registered (%s) is the control plane itself: give the member cluster's kubeconfig with --kubeconfig and --context", o.Member.Host)
	}
	if err := checkNotJoined(ctx, member, o.ClusterName); err != nil {
		return nil, err
	}
	bootstrapClient, err := kubernetes.NewForConfig(&rest.Config{Host: d.Server, BearerToken: o.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: d.CA}})
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, csrName, err := requestAgentCertificate(ctx, bootstrapClient, o.ClusterName, timeout, o.CertExpiration)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := AgentKubeconfig(d.Server, d.CA, o.ClusterName, certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, member, KubeconfigSecretNamespace); err != nil {
		return nil, err
	}
	if err := writeKubeconfigSecret(ctx, member, kubeconfig); err != nil {
		return nil, err
	}
	return &RegisterResult{Kubeconfig: kubeconfig, CSRName: csrName, Server: d.Server}, nil
}

// agentUsages are the key usages an agent certificate asks for.
var agentUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}

// requestAgentCertificate creates the agent's key and CSR and waits for the
// signed certificate; it returns the certificate and key PEM and the CSR's
// name.
func requestAgentCertificate(ctx context.Context, cs kubernetes.Interface, cluster string, timeout, expiration time.Duration) ([]byte, []byte, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, "", fmt.Errorf("generate the agent's key: %w", err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, "", fmt.Errorf("encode the agent's key: %w", err)
	}
	csrPEM, err := certutil.MakeCSR(key, &pkix.Name{CommonName: AgentUser(cluster), Organization: []string{AgentGroup}}, nil, nil)
	if err != nil {
		return nil, nil, "", fmt.Errorf("make the agent's certificate request: %w", err)
	}
	var lifetime *time.Duration
	if expiration > 0 {
		lifetime = &expiration
	}
	name := fmt.Sprintf("agent-csr-%s-%s", cluster, utilrand.String(5))
	reqName, uid, err := csr.RequestCertificateWithContext(ctx, cs, csrPEM, name, certificatesv1.KubeAPIServerClientSignerName, lifetime, agentUsages, key)
	if err != nil {
		if apierrors.IsUnauthorized(err) {
			return nil, nil, "", errInvalidToken
		}
		return nil, nil, "", fmt.Errorf("create the CertificateSigningRequest for %s: %w", AgentUser(cluster), err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	certPEM, err := csr.WaitForCertificate(waitCtx, cs, reqName, uid)
	if err != nil {
		return nil, nil, "", csrFailure(ctx, cs, reqName, timeout, err)
	}
	return certPEM, keyPEM, reqName, nil
}

// csrFailure explains why no certificate came: the CSR's Denied or Failed
// condition, else no approval within the timeout.
func csrFailure(ctx context.Context, cs kubernetes.Interface, name string, timeout time.Duration, waitErr error) error {
	if req, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{}); err == nil {
		for _, c := range req.Status.Conditions {
			switch c.Type {
			case certificatesv1.CertificateDenied:
				return fmt.Errorf("the control plane denied CertificateSigningRequest %s (%s): %s", name, c.Reason, c.Message)
			case certificatesv1.CertificateFailed:
				return fmt.Errorf("the control plane could not sign CertificateSigningRequest %s (%s): %s", name, c.Reason, c.Message)
			case certificatesv1.CertificateApproved:
				return fmt.Errorf("CertificateSigningRequest %s was approved but not signed within %s: is kube-controller-manager's CSR signing controller running on the control plane?", name, timeout)
			}
		}
	}
	if ctx.Err() == nil {
		return fmt.Errorf("CertificateSigningRequest %s was not approved within %s: run the agentcsrapproving controller on the control plane "+
			"('flotilla controller-manager --controllers=*,agentcsrapproving'), or approve it with 'kubectl certificate approve %s' (%v)", name, timeout, name, waitErr)
	}
	return fmt.Errorf("wait for CertificateSigningRequest %s: %w", name, waitErr)
}

// AgentKubeconfig is the agent's control-plane kubeconfig: cluster
// "karmada-apiserver" (server, caPEM), user system:karmada:agent:<cluster>
// (client certificate and key PEM embedded), and the one context
// "karmada-agent", current. Errors: encoding failed.
func AgentKubeconfig(server string, caPEM []byte, cluster string, certPEM, keyPEM []byte) ([]byte, error) {
	const clusterName, contextName = "karmada-apiserver", "karmada-agent"
	user := AgentUser(cluster)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: user}
	cfg.CurrentContext = contextName
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("encode the agent's kubeconfig: %w", err)
	}
	return out, nil
}

// checkNotJoined refuses a member that already holds a control plane's
// credentials for another cluster name: the service account
// karmada-cluster/karmada-<name> that `flotilla join` (Push mode) and an
// agent reporting KubeCredentials make in it. Registering it again under a
// new name would give the control plane two Clusters for one member, whose
// copies of each object would fight.
func checkNotJoined(ctx context.Context, cs kubernetes.Interface, cluster string) error {
	sas, err := cs.CoreV1().ServiceAccounts(ClusterSecretNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("read the member cluster (service accounts in %s): %w (check --kubeconfig and --context)", ClusterSecretNamespace, err)
	}
	for _, sa := range sas.Items {
		have, ok := strings.CutPrefix(sa.Name, join.MemberServiceAccountPrefix)
		if !ok || have == cluster || have == "" || sa.Name == join.ImpersonatorServiceAccount {
			continue
		}
		return fmt.Errorf("this cluster is already joined to a control plane as %q (its ServiceAccount %s/%s holds that control plane's credentials): a cluster joins under one name; unjoin %s first, or delete that ServiceAccount if cluster %s no longer exists",
			have, ClusterSecretNamespace, sa.Name, have, have)
	}
	return nil
}

// checkMember reads the member: it must answer, and any agent credentials
// it already holds must be for the same cluster name (a cluster registered
// as member2 is not registered again as member3).
func checkMember(ctx context.Context, cs kubernetes.Interface, cluster string) error {
	sec, err := cs.CoreV1().Secrets(KubeconfigSecretNamespace).Get(ctx, KubeconfigSecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the member cluster (Secret %s/%s): %w (check --kubeconfig and --context)", KubeconfigSecretNamespace, KubeconfigSecretName, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data[KubeconfigSecretKey])
	if err != nil || len(cfg.CertData) == 0 {
		return nil // not an agent certificate: replaced
	}
	block, _ := pem.Decode(cfg.CertData)
	if block == nil {
		return nil
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || !strings.HasPrefix(cert.Subject.CommonName, AgentUserPrefix) {
		return nil
	}
	if have := strings.TrimPrefix(cert.Subject.CommonName, AgentUserPrefix); have != cluster {
		return fmt.Errorf("this cluster is already registered as %q (its Secret %s/%s holds that agent's credentials): a cluster registers under one name; to rename it, delete Cluster %s on the control plane and that Secret first",
			have, KubeconfigSecretNamespace, KubeconfigSecretName, have)
	}
	return nil
}

// sameServer reports whether two API server URLs name the same host and port.
func sameServer(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host != "" && strings.EqualFold(ua.Host, ub.Host)
}

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, name string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s in the member cluster: %w", name, err)
	}
	return nil
}

// writeKubeconfigSecret stores kubeconfig in the member's Secret
// karmada-system/karmada-kubeconfig, creating or replacing it.
func writeKubeconfigSecret(ctx context.Context, cs kubernetes.Interface, kubeconfig []byte) error {
	secrets := cs.CoreV1().Secrets(KubeconfigSecretNamespace)
	want := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: KubeconfigSecretNamespace, Name: KubeconfigSecretName},
		Type: corev1.SecretTypeOpaque, Data: map[string][]byte{KubeconfigSecretKey: kubeconfig}}
	have, err := secrets.Get(ctx, KubeconfigSecretName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = secrets.Create(ctx, want, metav1.CreateOptions{})
	case err == nil:
		if have.Data == nil {
			have.Data = map[string][]byte{}
		}
		have.Data[KubeconfigSecretKey] = kubeconfig
		_, err = secrets.Update(ctx, have, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("write Secret %s/%s in the member cluster: %w", KubeconfigSecretNamespace, KubeconfigSecretName, err)
	}
	return nil
}

// RemoveAgentCredentials deletes the agent's kubeconfig Secret
// (karmada-system/karmada-kubeconfig) from the member reached by member, as
// unregistering does, so that the cluster can be registered again. A
// Secret already gone is no error.
func RemoveAgentCredentials(ctx context.Context, member *rest.Config) error {
	cs, err := kubernetes.NewForConfig(member)
	if err != nil {
		return err
	}
	err = cs.CoreV1().Secrets(KubeconfigSecretNamespace).Delete(ctx, KubeconfigSecretName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Secret %s/%s in the member cluster: %w", KubeconfigSecretNamespace, KubeconfigSecretName, err)
	}
	return nil
}
