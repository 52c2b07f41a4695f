package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cookieName holds a token sign-in's session id.
const cookieName = "flotilla-dashboard-session"

// user is who a request runs as, with clients that carry their identity.
type user struct {
	Name   string
	Groups []string
	// Via says how they signed in: "token" or "client certificate".
	Via string
	cfg *rest.Config
	cl  client.Client
	dyn dynamic.Interface
	kc  kubernetes.Interface

	mu sync.Mutex
	// namespaces are those the user may read, when they may not list
	// across all of them; refreshed after namespacesTTL.
	namespaces   []string
	namespacesAt time.Time
	// may caches SelfSubjectAccessReview answers for mayTTL.
	may map[string]mayAnswer
}

type mayAnswer struct {
	allowed bool
	at      time.Time
}

const mayTTL = 30 * time.Second

// sessions are the token sign-ins, by a random id kept in a cookie; they
// live in memory only (a restarted dashboard asks users to sign in again).
type sessions struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]*session
	// certs are the users signed in by client certificate, by the
	// certificate's hash (clients reused across requests).
	certs map[string]*user
}

type session struct {
	u       *user
	expires time.Time
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{ttl: ttl, m: map[string]*session{}, certs: map[string]*user{}}
}

func (s *sessions) add(u *user) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	id := base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, v := range s.m {
		if now.After(v.expires) {
			delete(s.m, k)
		}
	}
	s.m[id] = &session{u: u, expires: now.Add(s.ttl)}
	return id
}

func (s *sessions) get(id string) *user {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.m[id]
	if v == nil || time.Now().After(v.expires) {
		delete(s.m, id)
		return nil
	}
	return v.u
}

func (s *sessions) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// userOf returns who r runs as: the subject of a verified client
// certificate (CN the user, O the groups, as the API server reads one), else
// the session of the cookie; nil when neither.
func (s *Server) userOf(r *http.Request) *user {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		leaf := r.TLS.VerifiedChains[0][0]
		sum := sha256.Sum256(leaf.Raw)
		key := hex.EncodeToString(sum[:])
		s.sessions.mu.Lock()
		defer s.sessions.mu.Unlock()
		if u := s.sessions.certs[key]; u != nil {
			return u
		}
		cfg := rest.CopyConfig(s.own)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: leaf.Subject.CommonName, Groups: leaf.Subject.Organization}
		u, err := s.newUser(cfg, leaf.Subject.CommonName, leaf.Subject.Organization, "client certificate")
		if err != nil {
			return nil
		}
		s.sessions.certs[key] = u
		return u
	}
	c, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	return s.sessions.get(c.Value)
}

func (s *Server) newUser(cfg *rest.Config, name string, groups []string, via string) (*user, error) {
	cl, err := client.New(cfg, client.Options{Scheme: s.scheme, Mapper: s.mapper})
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &user{Name: name, Groups: groups, Via: via, cfg: cfg, cl: cl, dyn: dyn, kc: kc, may: map[string]mayAnswer{}}, nil
}

// signIn checks token with the control plane (a SelfSubjectReview made
// with it) and returns its user. Errors say, in words for the sign-in page,
// why the token was refused.
func (s *Server) signIn(ctx context.Context, token string) (*user, error) {
	if token == "" {
		return nil, fmt.Errorf("paste a bearer token: for example the one 'flotilla dashboard token' or 'kubectl create token' prints")
	}
	cfg := rest.CopyConfig(s.anonymous)
	cfg.BearerToken = token
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	review, err := kc.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case apierrors.IsUnauthorized(err):
		return nil, fmt.Errorf("the control plane did not accept this token (401 Unauthorized): it is wrong, expired or revoked; make a new one with 'flotilla dashboard token'")
	case err != nil:
		return nil, fmt.Errorf("cannot check the token with the control plane: %w", err)
	}
	info := review.Status.UserInfo
	return s.newUser(cfg, info.Username, info.Groups, "token")
}

// mayRead reports whether u may get the non-resource path (for example
// /metrics), by a SelfSubjectAccessReview cached for mayTTL.
func (u *user) mayGetPath(ctx context.Context, path string) bool {
	key := "get " + path
	u.mu.Lock()
	if a, ok := u.may[key]; ok && time.Since(a.at) < mayTTL {
		u.mu.Unlock()
		return a.allowed
	}
	u.mu.Unlock()
	review, err := u.kc.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"}},
	}, metav1.CreateOptions{})
	allowed := err == nil && review.Status.Allowed
	u.mu.Lock()
	u.may[key] = mayAnswer{allowed: allowed, at: time.Now()}
	u.mu.Unlock()
	return allowed
}
