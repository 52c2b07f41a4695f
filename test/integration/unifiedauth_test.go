package integration

import (
	"context"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/api/events"
	"github.com/flotilla-io/flotilla/internal/controller/member/unifiedauth"
	"github.com/flotilla-io/flotilla/internal/member/proxy"
)

// unifiedAuthCases check Karmada's unified authentication: each member's
// karmada-impersonator ClusterRole lets the Cluster proxy impersonate exactly
// the subjects control-plane RBAC allows on that cluster's proxy, and follows
// changes of that RBAC; a caller reaches the member through the proxy as
// itself.
var unifiedAuthCases = []integrationCase{
	{
		name: "a subject granted member1's proxy is impersonated there only, until the grant goes",
		run: func(e *env) {
			user := "alice-" + e.ns
			role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy-" + e.ns}, Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1"}, Verbs: []string{"get"}}}}
			e.createClusterScoped(role)
			grant := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "proxy-" + e.ns},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
			e.createClusterScoped(grant)
			e.waitImpersonable("member1", user, true)
			if impersonable(e, "member2", user) {
				e.Errorf("member2's karmada-impersonator lists %s, granted member1's proxy only", user)
			}
			// Through the proxy, as the user: the member answers, and refuses
			// what the user has no rights to there.
			cp := rest.CopyConfig(theStack.controlPlaneConfig)
			cp.Impersonate = rest.ImpersonationConfig{UserName: user}
			kube := kubernetes.NewForConfigOrDie(cp)
			res := kube.CoreV1().RESTClient().Get().AbsPath(proxy.Prefix + "member1/proxy/api/v1/namespaces/default").Do(e.ctx)
			if err := res.Error(); err == nil || !strings.Contains(err.Error(), `User "`+user+`" cannot get resource "namespaces"`) {
				e.Errorf("through the proxy as %s: %v, want member1's own refusal of the user", user, err)
			}
			// The grant goes: the member no longer lets the impersonator act as
			// the user.
			e.delete(e.controlPlane, grant)
			e.waitImpersonable("member1", user, false)
			cfg, err := proxy.ImpersonatorConfig(e.ctx, e.controlPlane, "member1")
			if err != nil {
				e.Fatal(err)
			}
			cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
			_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
			if err == nil || !strings.Contains(err.Error(), "cannot impersonate") {
				e.Errorf("the impersonator acting as %s after the grant went: %v, want a refusal to impersonate", user, err)
			}
		},
	},
	{
		name: "the impersonator is bound to the member's karmada-impersonator service account, and the Cluster says so",
		run: func(e *env) {
			for _, m := range memberNames {
				waitFor(e, e.members[m], &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: unifiedauth.ImpersonatorName}}, "the impersonator binding in "+m,
					func(b *rbacv1.ClusterRoleBinding) (bool, string) {
						ok := b.RoleRef.Name == unifiedauth.ImpersonatorName && len(b.Subjects) == 1 &&
							b.Subjects[0].Kind == rbacv1.ServiceAccountKind && b.Subjects[0].Namespace == "karmada-cluster" && b.Subjects[0].Name == unifiedauth.ImpersonatorName
						return ok, describe("roleRef", b.RoleRef, "subjects", b.Subjects)
					})
				e.waitEventOn(eventOn{ns: metav1.NamespaceDefault, kind: "Cluster", name: m, reason: events.SyncImpersonationConfigSucceed,
					source: unifiedauth.EventSource})
			}
		},
	},
}

// impersonable reports whether the karmada-impersonator ClusterRole in
// member lets the impersonator act as user.
func impersonable(e *env, member, user string) bool {
	role := &rbacv1.ClusterRole{}
	if err := e.members[member].Get(e.ctx, client.ObjectKey{Name: unifiedauth.ImpersonatorName}, role); err != nil {
		return false
	}
	return slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.Resources, "users") && slices.Contains(r.ResourceNames, user)
	})
}

// waitImpersonable waits until impersonable(member, user) is want.
func (e *env) waitImpersonable(member, user string, want bool) {
	e.Helper()
	e.eventually("karmada-impersonator in "+member+" to list "+user+": "+map[bool]string{true: "yes", false: "no"}[want], func() (bool, string) {
		return impersonable(e, member, user) == want, ""
	})
}
