package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/certificate"
	"k8s.io/klog/v2"
	kubeletcert "k8s.io/kubernetes/pkg/kubelet/certificate"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/member/join"
	"github.com/flotilla-io/flotilla/internal/member/register"
)

// reportCredentials gives the control plane a token for the member, as
// `flotilla join` does for a Push-mode cluster, in the Secret
// karmada-cluster/<cluster> owned by the Cluster (as karmada-agent does,
// so that it goes with the Cluster), and returns the reference to it.
func reportCredentials(ctx context.Context, c client.Client, o Options, cluster *clusterv1alpha1.Cluster) (*clusterv1alpha1.LocalSecretReference, error) {
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	token, err := join.MemberToken(tctx, o.Member, o.ClusterName)
	if err != nil {
		return nil, fmt.Errorf("make the control plane's credentials for the member: %w", err)
	}
	data := map[string][]byte{clusterv1alpha1.SecretCADataKey: o.Member.CAData, clusterv1alpha1.SecretTokenKey: token}
	return reportSecret(ctx, c, cluster, o.ClusterName, data)
}

// reportImpersonator gives the control plane the token of the member's
// impersonator (join.ImpersonatorToken), which the Cluster proxy
// authenticates with, in the Secret karmada-cluster/<cluster>-impersonator
// owned by the Cluster, as karmada-agent does for KubeImpersonator, and
// returns the reference to it.
func reportImpersonator(ctx context.Context, c client.Client, o Options, cluster *clusterv1alpha1.Cluster) (*clusterv1alpha1.LocalSecretReference, error) {
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	token, err := join.ImpersonatorToken(tctx, o.Member)
	if err != nil {
		return nil, fmt.Errorf("make the member's impersonator: %w", err)
	}
	return reportSecret(ctx, c, cluster, o.ClusterName+join.ImpersonatorSecretSuffix, map[string][]byte{clusterv1alpha1.SecretTokenKey: token})
}

// reportSecret writes data to the Secret karmada-cluster/<name> on the
// control plane, owned by cluster, unless it already holds it.
func reportSecret(ctx context.Context, c client.Client, cluster *clusterv1alpha1.Cluster, name string, data map[string][]byte) (*clusterv1alpha1.LocalSecretReference, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: join.ClusterSecretNamespace, Name: name}
	switch err := c.Get(ctx, key, secret); {
	case apierrors.IsNotFound(err):
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: data}
		join.MarkOwned(secret, cluster)
		if err := c.Create(ctx, secret); err != nil {
			return nil, fmt.Errorf("report the member's credentials in Secret %s: %w", key, err)
		}
	case err != nil:
		return nil, fmt.Errorf("read Secret %s: %w", key, err)
	case !equality.Semantic.DeepEqual(secret.Data, data) || !join.OwnedBy(secret, cluster) || secret.Labels[join.SystemLabel] != "true":
		secret.Data = data
		join.MarkOwned(secret, cluster)
		if err := c.Update(ctx, secret); err != nil {
			return nil, fmt.Errorf("report the member's credentials in Secret %s: %w", key, err)
		}
	}
	return &clusterv1alpha1.LocalSecretReference{Namespace: key.Namespace, Name: key.Name}, nil
}

// rotatingControlPlaneConfig reads the control plane's kubeconfig from the
// member's Secret karmada-system/karmada-kubeconfig. When it holds a client
// certificate, the returned config takes its certificate from a
// certificate manager that renews it (a CSR signed kubernetes.io/
// kube-apiserver-client, approved as a self-renewal) when 70–90% of its
// lifetime has passed and writes the new one back to the Secret; open
// connections are closed on renewal so that the next ones use it.
func rotatingControlPlaneConfig(ctx context.Context, member *rest.Config, name string) (*rest.Config, error) {
	kube, err := kubernetes.NewForConfig(member)
	if err != nil {
		return nil, err
	}
	store := &secretStore{kube: kube, host: member.Host}
	raw, err := store.kubeconfig(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig in the member's Secret %s/%s is not valid: %w", register.KubeconfigSecretNamespace, register.KubeconfigSecretName, err)
	}
	if len(cfg.CertData) == 0 || len(cfg.KeyData) == 0 {
		return cfg, nil // a token or other credential: nothing to renew
	}
	base := rest.CopyConfig(cfg)
	base.CertData, base.KeyData = nil, nil
	var mgr certificate.Manager
	mgr, err = certificate.NewManager(&certificate.Config{
		// The renewal request is sent with the certificate stored now.
		ClientsetFn: func(*tls.Certificate) (kubernetes.Interface, error) {
			raw, err := store.kubeconfig(ctx)
			if err != nil {
				return nil, err
			}
			c, err := clientcmd.RESTConfigFromKubeConfig(raw)
			if err != nil {
				return nil, err
			}
			return kubernetes.NewForConfig(c)
		},
		Template: &x509.CertificateRequest{Subject: pkix.Name{
			CommonName: register.AgentUserPrefix + name, Organization: []string{register.AgentGroup}}},
		SignerName: certificatesv1.KubeAPIServerClientSignerName,
		GetUsages: func(key any) []certificatesv1.KeyUsage {
			if _, ok := key.(*ecdsa.PrivateKey); ok {
				return []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
			}
			return []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
		},
		CertificateStore: store,
		Name:             "karmada-agent-client",
		Ctx:              &ctx,
	})
	if err != nil {
		return nil, fmt.Errorf("certificate manager: %w", err)
	}
	if mgr.Current() == nil {
		return nil, fmt.Errorf("the client certificate in the member's Secret %s/%s cannot be read", register.KubeconfigSecretNamespace, register.KubeconfigSecretName)
	}
	mgr.Start()
	go func() { <-ctx.Done(); mgr.Stop() }()
	out := rest.CopyConfig(base)
	if _, err := kubeletcert.UpdateTransport(klog.FromContext(ctx), ctx.Done(), out, mgr, 0); err != nil {
		return nil, fmt.Errorf("rotate the agent's certificate: %w", err)
	}
	return out, nil
}

// secretStore keeps the agent's client certificate in the kubeconfig of
// the member's Secret karmada-system/karmada-kubeconfig (client-go's
// certificate.Store).
type secretStore struct {
	kube kubernetes.Interface
	host string // the member's API server, for messages
}

func (s *secretStore) secret(ctx context.Context) (*corev1.Secret, error) {
	sec, err := s.kube.CoreV1().Secrets(register.KubeconfigSecretNamespace).Get(ctx, register.KubeconfigSecretName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read the agent's credentials, Secret %s/%s in the member at %s (written by 'flotilla register'; check --kubeconfig and --context): %w",
			register.KubeconfigSecretNamespace, register.KubeconfigSecretName, s.host, err)
	}
	return sec, nil
}

func (s *secretStore) kubeconfig(ctx context.Context) ([]byte, error) {
	sec, err := s.secret(ctx)
	if err != nil {
		return nil, err
	}
	raw := sec.Data[register.KubeconfigSecretKey]
	if len(raw) == 0 {
		return nil, fmt.Errorf("the member's Secret %s/%s has no %q key", register.KubeconfigSecretNamespace, register.KubeconfigSecretName, register.KubeconfigSecretKey)
	}
	return raw, nil
}

// Current returns the certificate and key of the stored kubeconfig.
func (s *secretStore) Current() (*tls.Certificate, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := s.kubeconfig(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return nil, err
	}
	if len(cfg.CertData) == 0 || len(cfg.KeyData) == 0 {
		e := certificate.NoCertKeyError("no client certificate in the stored kubeconfig")
		return nil, &e
	}
	return parsePair(cfg.CertData, cfg.KeyData)
}

// Update writes a renewed certificate and key into the stored kubeconfig.
func (s *secretStore) Update(cert, key []byte) (*tls.Certificate, error) {
	pair, err := parsePair(cert, key)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sec, err := s.secret(ctx)
	if err != nil {
		return nil, err
	}
	kc, err := clientcmd.Load(sec.Data[register.KubeconfigSecretKey])
	if err != nil {
		return nil, err
	}
	for _, ai := range kc.AuthInfos {
		ai.ClientCertificateData, ai.ClientKeyData = cert, key
	}
	if len(kc.AuthInfos) == 0 {
		kc.AuthInfos = map[string]*clientcmdapi.AuthInfo{"agent": {ClientCertificateData: cert, ClientKeyData: key}}
	}
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, err
	}
	sec.Data[register.KubeconfigSecretKey] = raw
	if _, err := s.kube.CoreV1().Secrets(sec.Namespace).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("store the renewed certificate: %w", err)
	}
	return pair, nil
}

func parsePair(cert, key []byte) (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, err
	}
	if pair.Leaf == nil && len(pair.Certificate) > 0 {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, err
		}
	}
	return &pair, nil
}
