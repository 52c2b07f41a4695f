package register

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecrets "k8s.io/cluster-bootstrap/util/secrets"
	bootstraptokens "k8s.io/cluster-bootstrap/util/tokens"
)

// Token is one bootstrap token as ListTokens reads it from its Secret.
type Token struct {
	// Token is "<id>.<secret>", the value `flotilla register --token` takes.
	Token string
	// ID is the token's public six-character id.
	ID string
	// Description is the Secret's description, possibly empty.
	Description string
	// Expires is when the token stops authenticating; nil for never.
	Expires *time.Time
	// Usages lists the usage-bootstrap-<usage> keys set to "true", sorted
	// ("authentication", "signing").
	Usages []string
	// ExtraGroups are the groups the token authenticates with, besides
	// system:bootstrappers.
	ExtraGroups []string
}

// CreateToken creates a bootstrap token as `karmadactl token create` (and
// kubeadm) does and returns it as "<id>.<secret>": Secret
// kube-system/bootstrap-token-<id> of type bootstrap.kubernetes.io/token,
// usable for authentication and for signing cluster-info, with
// auth-extra-groups BootstrapGroup. ttl > 0 sets its expiration (the
// token-cleaner controller deletes it then); ttl == 0 makes a token that
// never expires. Errors: a negative ttl, or the Secret could not be
// created.
func CreateToken(ctx context.Context, cs kubernetes.Interface, ttl time.Duration, description string) (string, error) {
	if ttl < 0 {
		return "", fmt.Errorf("the token's TTL must be positive, or 0 for a token that never expires; got %s", ttl)
	}
	token, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return "", fmt.Errorf("generate a bootstrap token: %w", err)
	}
	id, secret, err := bootstraptokens.ParseToken(token)
	if err != nil {
		return "", err
	}
	data := map[string][]byte{
		bootstrapapi.BootstrapTokenIDKey:               []byte(id),
		bootstrapapi.BootstrapTokenSecretKey:           []byte(secret),
		bootstrapapi.BootstrapTokenUsageAuthentication: []byte("true"),
		bootstrapapi.BootstrapTokenUsageSigningKey:     []byte("true"),
		bootstrapapi.BootstrapTokenExtraGroupsKey:      []byte(BootstrapGroup),
	}
	if description != "" {
		data[bootstrapapi.BootstrapTokenDescriptionKey] = []byte(description)
	}
	if ttl > 0 {
		data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(time.Now().Add(ttl).UTC().Format(time.RFC3339))
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: bootstraputil.BootstrapTokenSecretName(id)},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data:       data,
	}
	if _, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create the bootstrap token Secret kube-system/%s: %w", s.Name, err)
	}
	return token, nil
}

// ListTokens lists every bootstrap token of the control plane (Secrets of
// type bootstrap.kubernetes.io/token in kube-system), expired ones
// included, sorted by id. Secrets that do not hold a well-formed token are
// skipped.
func ListTokens(ctx context.Context, cs kubernetes.Interface) ([]Token, error) {
	list, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("type", string(bootstrapapi.SecretTypeBootstrapToken)).String()})
	if err != nil {
		return nil, fmt.Errorf("list the bootstrap tokens in kube-system: %w", err)
	}
	var out []Token
	for i := range list.Items {
		if t, ok := tokenFromSecret(&list.Items[i]); ok {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func tokenFromSecret(s *corev1.Secret) (Token, bool) {
	id := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenIDKey)
	secret := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenSecretKey)
	token := bootstraputil.TokenFromIDAndSecret(id, secret)
	if !bootstraputil.IsValidBootstrapToken(token) {
		return Token{}, false
	}
	t := Token{Token: token, ID: id, Description: bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenDescriptionKey)}
	if exp := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenExpirationKey); exp != "" {
		if at, err := time.Parse(time.RFC3339, exp); err == nil {
			t.Expires = &at
		}
	}
	for k, v := range s.Data {
		if strings.HasPrefix(k, bootstrapapi.BootstrapTokenUsagePrefix) && string(v) == "true" {
			t.Usages = append(t.Usages, strings.TrimPrefix(k, bootstrapapi.BootstrapTokenUsagePrefix))
		}
	}
	sort.Strings(t.Usages)
	if groups := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenExtraGroupsKey); groups != "" {
		t.ExtraGroups = strings.Split(groups, ",")
	}
	return t, true
}

// DeleteToken deletes the bootstrap token given as "<id>.<secret>" or as
// its id alone. Errors: neither form, or no such token.
func DeleteToken(ctx context.Context, cs kubernetes.Interface, tokenOrID string) error {
	id := tokenOrID
	if tid, _, err := bootstraptokens.ParseToken(tokenOrID); err == nil {
		id = tid
	} else if !bootstraputil.IsValidBootstrapTokenID(tokenOrID) {
		return fmt.Errorf("%q is neither a bootstrap token (<6 characters [a-z0-9]>.<16 characters [a-z0-9]>) nor a token id (6 characters [a-z0-9])", tokenOrID)
	}
	name := bootstraputil.BootstrapTokenSecretName(id)
	err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("no bootstrap token with id %q (no Secret kube-system/%s); see 'flotilla token list'", id, name)
	}
	if err != nil {
		return fmt.Errorf("delete the bootstrap token Secret kube-system/%s: %w", name, err)
	}
	return nil
}
