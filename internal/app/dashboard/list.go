package dashboard

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// namespacesTTL is how long the namespaces a user may read are kept.
const namespacesTTL = 30 * time.Second

// scope says what part of a kind a page's list covers.
type scope struct {
	// All: the user listed across every namespace.
	All bool
	// Namespaces are those read one by one when the user may not list
	// across them all.
	Namespaces []string
	// Forbidden is set when the user may read none of the kind; the page
	// says so instead of showing an empty list.
	Forbidden string
}

// list reads a kind into into as u (with opts, such as a field selector): across all namespaces when u may,
// else namespace by namespace over those u may read (a user with RBAC on
// one namespace sees that namespace). Cluster-scoped kinds are all or
// nothing. A Forbidden answer is not an error: scope.Forbidden says it.
func (s *Server) list(ctx context.Context, u *user, into client.ObjectList, namespaced bool, opts ...client.ListOption) (scope, error) {
	err := u.cl.List(ctx, into, opts...)
	if err == nil {
		return scope{All: true}, nil
	}
	if !apierrors.IsForbidden(err) {
		return scope{}, err
	}
	denied := scope{Forbidden: fmt.Sprintf("%s may not list these (RBAC): %s", u.Name, apierrors.ReasonForError(err))}
	if status, ok := err.(apierrors.APIStatus); ok {
		denied.Forbidden = fmt.Sprintf("RBAC does not let %s list them: %s", u.Name, status.Status().Message)
	}
	if !namespaced {
		return denied, nil
	}
	namespaces, err := s.namespacesOf(ctx, u)
	if err != nil {
		return scope{}, err
	}
	var mu sync.Mutex
	var items []runtime.Object
	var readable []string
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	var firstErr error
	for _, ns := range namespaces {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			one := into.DeepCopyObject().(client.ObjectList)
			err := u.cl.List(ctx, one, append([]client.ListOption{client.InNamespace(ns)}, opts...)...)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case apierrors.IsForbidden(err):
			case err != nil:
				if firstErr == nil {
					firstErr = err
				}
			default:
				got, err := meta.ExtractList(one)
				if err != nil {
					firstErr = err
					return
				}
				items = append(items, got...)
				readable = append(readable, ns)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return scope{}, firstErr
	}
	if len(readable) == 0 {
		return denied, nil
	}
	if err := meta.SetList(into, items); err != nil {
		return scope{}, err
	}
	sort.Strings(readable)
	return scope{Namespaces: readable}, nil
}

// namespacesOf lists the namespaces to try for u: those u may list, else
// every namespace's name as the dashboard sees it (a name tells no more
// than the refusals would).
func (s *Server) namespacesOf(ctx context.Context, u *user) ([]string, error) {
	u.mu.Lock()
	if u.namespaces != nil && time.Since(u.namespacesAt) < namespacesTTL {
		defer u.mu.Unlock()
		return u.namespaces, nil
	}
	u.mu.Unlock()
	list := &corev1.NamespaceList{}
	if err := u.cl.List(ctx, list); err != nil {
		if !apierrors.IsForbidden(err) {
			return nil, err
		}
		if err := s.ownClient.List(ctx, list); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(list.Items))
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	u.mu.Lock()
	u.namespaces, u.namespacesAt = names, time.Now()
	u.mu.Unlock()
	return names, nil
}
