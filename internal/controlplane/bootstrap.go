// Package controlplane prepares a Kubernetes API server to be a Flotilla
// (Karmada-compatible) control plane (Install: the Karmada CRDs, the
// namespaces Karmada reserves, the components' RBAC and the registrations of
// the webhook and the metrics adapter), and holds the scheme of every
// Karmada group. `flotilla install` and `flotilla up` both use Install.
package controlplane

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/api/crds"
)

// Namespaces Karmada keeps on its control plane: karmada-system for its own
// components and karmada-cluster for member cluster credentials (the Secrets
// that Cluster.spec.secretRef points at).
var Namespaces = []string{"karmada-system", "karmada-cluster"}

// InstallCRDs installs or upgrades crds in parallel, which lets the API
// server overlap the per-CRD work (storage set-up, OpenAPI publication) of a
// first start, and waits until every one is Established (until ctx ends).
// It is idempotent. Errors name the CRD that could not be written, or those
// not Established in time.
func InstallCRDs(ctx context.Context, ext apiextensionsclient.Interface, want []*apiextensionsv1.CustomResourceDefinition) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, crd := range want {
		g.Go(func() error { return applyCRD(gctx, ext, crd) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return waitEstablished(ctx, ext, want)
}

// MemberCRDGroup is the API group whose CRDs a member needs for what the
// control plane propagates to it: the mcs-api ServiceExport and
// ServiceImport (Karmada asks its users to install them in every member).
const MemberCRDGroup = "multicluster.x-k8s.io"

// InstallMemberCRDs installs or upgrades the CRDs of MemberCRDGroup in a
// member cluster and waits until they are Established. It is idempotent;
// errors as Bootstrap's.
func InstallMemberCRDs(ctx context.Context, cfg *rest.Config) error {
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	all, err := crds.All()
	if err != nil {
		return err
	}
	var want []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range all {
		// ClusterProfiles describe members to the control plane's
		// consumers: members do not serve them.
		if crd.Spec.Group == MemberCRDGroup && crd.Spec.Names.Kind != "ClusterProfile" {
			want = append(want, crd)
		}
	}
	return InstallCRDs(ctx, ext, want)
}

func applyCRD(ctx context.Context, ext apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	client := ext.ApiextensionsV1().CustomResourceDefinitions()
	existing, err := client.Get(ctx, crd.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err := client.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read CRD %s: %w", crd.Name, err)
	}
	if equality.Semantic.DeepDerivative(crd.Spec, existing.Spec) && equality.Semantic.DeepDerivative(crd.Labels, existing.Labels) {
		return nil
	}
	existing.Spec = crd.Spec
	existing.Labels = crd.Labels
	existing.Annotations = crd.Annotations
	if _, err := client.Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("upgrade CRD %s: %w", crd.Name, err)
	}
	return nil
}

func waitEstablished(ctx context.Context, ext apiextensionsclient.Interface, want []*apiextensionsv1.CustomResourceDefinition) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var pending []string
		list, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
		done := map[string]bool{}
		if err == nil {
			for i := range list.Items {
				done[list.Items[i].Name] = established(&list.Items[i])
			}
		}
		for _, crd := range want {
			if !done[crd.Name] {
				pending = append(pending, crd.Name)
			}
		}
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRDs not Established: %s: %w", strings.Join(pending, ", "), ctx.Err())
		case <-tick.C:
		}
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
