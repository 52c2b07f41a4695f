package bootstrap

import (
	"context"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Temporary until the bootstrap package lands.
const (
	AgentUserPrefix           = "system:karmada:agent:"
	AgentGroup                = "system:karmada:agents"
	KubeconfigSecretNamespace = "karmada-system"
	KubeconfigSecretName      = "karmada-kubeconfig"
	KubeconfigSecretKey       = "karmada-kubeconfig"
)

// Stubs of the contract, replaced by the bootstrap package.
type RegisterOptions struct {
	ControlPlane             string
	Token                    string
	CACertHashes             []string
	UnsafeSkipCAVerification bool
	ClusterName              string
	Member                   *rest.Config
	Timeout                  time.Duration
	CertExpiration           time.Duration
}
type RegisterResult struct{ Kubeconfig []byte }

func CACertHash([]byte) (string, error) { return "", nil }
func CreateToken(context.Context, kubernetes.Interface, time.Duration, string) (string, error) {
	return "", nil
}
func Register(context.Context, RegisterOptions) (*RegisterResult, error) { return nil, nil }
