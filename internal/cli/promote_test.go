package cli

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
)

func TestResolveKindLikeKubectl(t *testing.T) {
	deployments := metav1.APIResource{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", ShortNames: []string{"deploy"}, Verbs: []string{"get", "list", "create"}}
	services := metav1.APIResource{Name: "services", SingularName: "service", Namespaced: true, Kind: "Service", ShortNames: []string{"svc"}, Verbs: []string{"get", "list", "create"}}
	clusterRoles := metav1.APIResource{Name: "clusterroles", SingularName: "clusterrole", Kind: "ClusterRole", Verbs: []string{"get", "list", "create"}}
	groups := []*restmapper.APIGroupResources{
		{Group: metav1.APIGroup{Name: "", Versions: []metav1.GroupVersionForDiscovery{{Version: "v1"}}, PreferredVersion: metav1.GroupVersionForDiscovery{Version: "v1"}},
			VersionedResources: map[string][]metav1.APIResource{"v1": {services}}},
		{Group: metav1.APIGroup{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "apps/v1", Version: "v1"}}, PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}},
			VersionedResources: map[string][]metav1.APIResource{"v1": {deployments}}},
		{Group: metav1.APIGroup{Name: "rbac.authorization.k8s.io", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "rbac.authorization.k8s.io/v1", Version: "v1"}}, PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "rbac.authorization.k8s.io/v1", Version: "v1"}},
			VersionedResources: map[string][]metav1.APIResource{"v1": {clusterRoles}}},
	}
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{services}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{deployments}},
		{GroupVersion: "rbac.authorization.k8s.io/v1", APIResources: []metav1.APIResource{clusterRoles}},
	}}}
	mapper := restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), disc, nil)

	deploy := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for arg, want := range map[string]schema.GroupVersionResource{
		"deployment": deploy, "deploy": deploy, "deployments": deploy, "deployments.apps": deploy,
		"deployment.v1.apps": deploy, "Deployment": deploy, "Deployment.apps": deploy,
		"svc":         {Version: "v1", Resource: "services"},
		"clusterrole": {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	} {
		m, err := resolveKind(mapper, arg)
		if err != nil {
			t.Errorf("%q: %v", arg, err)
			continue
		}
		if m.Resource != want {
			t.Errorf("%q resolves to %v, want %v", arg, m.Resource, want)
		}
	}
	for _, arg := range []string{"widget", "deployments.nosuchgroup", ""} {
		if _, err := resolveKind(mapper, arg); err == nil || !strings.Contains(err.Error(), "kubectl api-resources") {
			t.Errorf("%q: error %v, want one pointing at kubectl api-resources", arg, err)
		}
	}
}
