package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/member/proxy"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// controlPlaneRow names the control plane in the CLUSTER column, as
// karmadactl does.
const controlPlaneRow = "Karmada"

// queryFromCluster marks, in -o yaml/json output, the cluster an object came
// from (the annotation Karmada's metrics adapter uses for the same purpose).
const queryFromCluster = registry.QueryFromClusterAnnotation

// target is one cluster a multi-cluster read goes to.
type target struct {
	name string
	cfg  *rest.Config
}

// memberTargets resolves -C (empty: every joined cluster) to configs that
// reach each member through the control plane's Cluster proxy, with the
// caller's control-plane credentials. Unknown names are an error listing the
// joined clusters.
func memberTargets(ctx context.Context, cp controlPlaneFlags, names []string) ([]target, error) {
	cfg, err := cp.restConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: controlplane.NewScheme()})
	if err != nil {
		return nil, err
	}
	list := &clusterv1alpha1.ClusterList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list the control plane's Clusters: %w", err)
	}
	joined := map[string]bool{}
	var all []string
	for _, cl := range list.Items {
		joined[cl.Name] = true
		all = append(all, cl.Name)
	}
	sort.Strings(all)
	if len(names) == 0 {
		names = all
	}
	var out []target
	var unknown []string
	for _, n := range names {
		if !joined[n] {
			unknown = append(unknown, n)
			continue
		}
		mc := rest.CopyConfig(cfg)
		mc.Host = strings.TrimSuffix(cfg.Host, "/") + proxy.Prefix + n + "/proxy"
		out = append(out, target{name: n, cfg: mc})
	}
	if len(unknown) > 0 {
		err := notJoined(unknown, all)
		if len(out) == 0 {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
	}
	return out, nil
}

// getRaw GETs path on t with accept and decodes the JSON answer into out.
func getRaw(ctx context.Context, t target, path string, query url.Values, accept string, out any) error {
	hc, err := rest.HTTPClientFor(t.cfg)
	if err != nil {
		return err
	}
	u := strings.TrimSuffix(t.cfg.Host, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		status := &metav1.Status{}
		if json.Unmarshal(body, status) == nil && status.Message != "" {
			return &apierrors.StatusError{ErrStatus: *status}
		}
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return json.Unmarshal(body, out)
}

// resourcePath is the API path of gvr's objects in namespace ("" for all or
// cluster-scoped), and name when given.
func resourcePath(m *meta.RESTMapping, namespace, name string) string {
	gv := m.Resource.GroupVersion()
	p := "/apis/" + gv.String()
	if gv.Group == "" {
		p = "/api/" + gv.Version
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace && namespace != "" {
		p += "/namespaces/" + namespace
	}
	p += "/" + m.Resource.Resource
	if name != "" {
		p += "/" + name
	}
	return p
}

type getOptions struct {
	cp            controlPlaneFlags
	clusters      []string
	namespace     string
	allNamespaces bool
	output        string
	selector      string
	scope         string
}

func newGetCommand() *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get KIND [NAME] [-C member1,member2] [-n NS] [-o wide|yaml|json]",
		Short: "Show objects of the member clusters (and the control plane) in one table",
		Long: `Show objects as 'kubectl get' does, read from several clusters at once through the
control plane's Cluster proxy (so your control-plane credentials and RBAC apply,
and members need not be reachable from your machine), with a CLUSTER column,
as 'karmadactl get' does.

--operation-scope says where to read: karmada (the control plane), members
(the clusters of -C, every joined cluster without it), or all. It defaults to
members when -C is given, else karmada.`,
		Example: `  flotilla get deploy -n shop -C member1,member2
  flotilla get pods -A --operation-scope members -o wide
  flotilla get deploy nginx --operation-scope all
  flotilla get deploy nginx -C member1 -o yaml`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
	}
	o.cp.add(cmd)
	f := cmd.Flags()
	f.StringSliceVarP(&o.clusters, "clusters", "C", nil, "member clusters to read (with --operation-scope members or all; without -C, every joined cluster); giving it makes members the default scope")
	f.StringVarP(&o.namespace, "namespace", "n", "", "namespace (default: the context's, else default)")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "every namespace")
	f.StringVarP(&o.output, "output", "o", "", "wide, yaml or json (default: a table)")
	f.StringVarP(&o.selector, "selector", "l", "", "label selector, e.g. app=web")
	f.StringVar(&o.scope, "operation-scope", "", "karmada, members or all (see above)")
	return cmd
}

func (o *getOptions) targets(ctx context.Context) ([]target, error) {
	scope := o.scope
	if scope == "" {
		scope = "karmada"
		if len(o.clusters) > 0 {
			scope = "members"
		}
	}
	var out []target
	switch scope {
	case "karmada", "all":
		cfg, err := o.cp.restConfig()
		if err != nil {
			return nil, err
		}
		out = append(out, target{name: controlPlaneRow, cfg: cfg})
	case "members":
	default:
		return nil, fmt.Errorf("--operation-scope %q: want karmada, members or all", o.scope)
	}
	if scope == "members" || scope == "all" {
		members, err := memberTargets(ctx, o.cp, o.clusters)
		if err != nil {
			return nil, err
		}
		out = append(out, members...)
	} else if len(o.clusters) > 0 {
		return nil, fmt.Errorf("-C names member clusters, which --operation-scope karmada does not read: use members or all")
	}
	return out, nil
}

// mapping resolves a kind argument (pods, deploy, deployments.apps, ...)
// with t's discovery.
func mapping(t target, arg string) (*meta.RESTMapping, error) {
	d, err := discovery.NewDiscoveryClientForConfig(t.cfg)
	if err != nil {
		return nil, err
	}
	if _, err := d.ServerVersion(); err != nil {
		return nil, fmt.Errorf("cannot reach the cluster: %w", err)
	}
	cached := memory.NewMemCacheClient(d)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	gvr, gr := schema.ParseResourceArg(strings.ToLower(arg))
	var res schema.GroupVersionResource
	if gvr != nil {
		res, err = mapper.ResourceFor(*gvr)
	}
	if gvr == nil || err != nil {
		res, err = mapper.ResourceFor(gr.WithVersion(""))
	}
	if err != nil {
		return nil, fmt.Errorf("the server doesn't have a resource type %q", arg)
	}
	gvk, err := mapper.KindFor(res)
	if err != nil {
		return nil, err
	}
	return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

func (o *getOptions) run(cmd *cobra.Command, args []string) error {
	ctx, cancel := context2(cmd, time.Minute)
	defer cancel()
	if o.namespace == "" && !o.allNamespaces {
		o.namespace = o.cp.defaultNamespace()
	}
	if o.allNamespaces {
		o.namespace = ""
	}
	name := ""
	if len(args) == 2 {
		name = args[1]
	}
	switch o.output {
	case "", "wide", "yaml", "json":
	default:
		return fmt.Errorf("--output %q: want wide, yaml or json", o.output)
	}
	targets, err := o.targets(ctx)
	if err != nil {
		return err
	}
	type answer struct {
		table *metav1.Table
		list  *unstructured.UnstructuredList
		err   error
	}
	answers := make([]answer, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := mapping(t, args[0])
			if err != nil {
				answers[i].err = err
				return
			}
			q := url.Values{}
			if o.selector != "" && name == "" {
				q.Set("labelSelector", o.selector)
			}
			path := resourcePath(m, o.namespace, name)
			if o.output == "yaml" || o.output == "json" {
				if name != "" {
					obj := &unstructured.Unstructured{}
					if answers[i].err = getRaw(ctx, t, path, q, "application/json", &obj.Object); answers[i].err == nil {
						answers[i].list = &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*obj}}
					}
					return
				}
				list := &unstructured.UnstructuredList{}
				if answers[i].err = getRaw(ctx, t, path, q, "application/json", &list.Object); answers[i].err == nil {
					items, _, _ := unstructured.NestedSlice(list.Object, "items")
					for _, it := range items {
						if m, ok := it.(map[string]any); ok {
							list.Items = append(list.Items, unstructured.Unstructured{Object: m})
						}
					}
					answers[i].list = list
				}
				return
			}
			table := &metav1.Table{}
			answers[i].err = getRaw(ctx, t, path, q, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json", table)
			answers[i].table = table
		}()
	}
	wg.Wait()
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	failed, reported := 0, 0
	for i, a := range answers {
		if a.err != nil {
			failed++
			if apierrors.IsNotFound(a.err) && name != "" {
				continue // kubectl-like: reported below when no cluster has it
			}
			reported++
			fmt.Fprintf(errOut, "error: cluster %s: %v\n", targets[i].name, a.err)
		}
	}
	if o.output == "yaml" || o.output == "json" {
		list := map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}}
		var items []any
		for i, a := range answers {
			if a.list == nil {
				continue
			}
			for _, it := range a.list.Items {
				ann := it.GetAnnotations()
				if ann == nil {
					ann = map[string]string{}
				}
				ann[queryFromCluster] = targets[i].name
				it.SetAnnotations(ann)
				items = append(items, it.Object)
			}
		}
		list["items"] = items
		var data []byte
		if o.output == "json" {
			data, err = json.MarshalIndent(list, "", "    ")
			data = append(data, '\n')
		} else {
			data, err = yaml.Marshal(list)
		}
		if err != nil {
			return err
		}
		if _, err := out.Write(data); err != nil {
			return err
		}
		if reported > 0 {
			return errReported
		}
		return nil
	}
	merged := mergeTables(targets, answers, func(i int) *metav1.Table { return answers[i].table })
	if len(merged.Rows) == 0 {
		if name != "" {
			return fmt.Errorf("%s %q not found in %s", args[0], name, clusterNames(targets))
		}
		if failed < len(targets) {
			fmt.Fprintf(errOut, "No resources found in %s.\n", clusterNames(targets))
		}
	} else {
		p := printers.NewTablePrinter(printers.PrintOptions{Wide: o.output == "wide", WithNamespace: o.allNamespaces})
		if err := p.PrintObj(merged, out); err != nil {
			return err
		}
	}
	if failed == len(targets) && len(targets) > 1 {
		return fmt.Errorf("no cluster answered")
	} else if failed == len(targets) {
		return fmt.Errorf("the cluster did not answer")
	}
	if reported > 0 {
		return errReported // a partial answer: the others were printed, the failures named above
	}
	return nil
}

func clusterNames(ts []target) string {
	var n []string
	for _, t := range ts {
		n = append(n, t.name)
	}
	return strings.Join(n, ", ")
}

// mergeTables joins the clusters' tables into one, with a CLUSTER column
// after NAME.
func mergeTables[A any](targets []target, answers []A, table func(int) *metav1.Table) *metav1.Table {
	merged := &metav1.Table{}
	for i := range answers {
		t := table(i)
		if t == nil || len(t.ColumnDefinitions) == 0 {
			continue
		}
		if merged.ColumnDefinitions == nil {
			cols := append([]metav1.TableColumnDefinition{}, t.ColumnDefinitions[:1]...)
			cols = append(cols, metav1.TableColumnDefinition{Name: "Cluster", Type: "string", Description: "the cluster the object is in"})
			merged.ColumnDefinitions = append(cols, t.ColumnDefinitions[1:]...)
		}
		for _, r := range t.Rows {
			if len(r.Cells) == 0 {
				continue
			}
			// The printer reads each row's namespace from its object.
			if r.Object.Object == nil && len(r.Object.Raw) > 0 {
				pom := &metav1.PartialObjectMetadata{}
				if json.Unmarshal(r.Object.Raw, pom) == nil {
					r.Object.Object = pom
				}
			}
			cells := append([]any{}, r.Cells[:1]...)
			cells = append(cells, targets[i].name)
			r.Cells = append(cells, r.Cells[1:]...)
			merged.Rows = append(merged.Rows, r)
		}
	}
	return merged
}

func newTopCommand() *cobra.Command {
	var cp controlPlaneFlags
	var clusters []string
	var namespace, selector string
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "top pods|nodes|clusters [-C member1,member2] [-n NS]",
		Short: "Show the CPU and memory use of the member clusters' pods or nodes, or their free room",
		Long: `Show the CPU and memory use of pods or nodes in several member clusters, read from
each member's metrics.k8s.io (metrics-server) through the control plane's Cluster
proxy, with a CLUSTER column, as 'karmadactl top' does. A member that serves no
metrics API is named on stderr and left out.

'top clusters' shows what the scheduler estimates from: each member's free CPU,
memory and pods out of its allocatable ones (allocatable minus the requests of its
pods, pending ones included), and how many nodes fall into each resource model
grade (GRADES, grade:nodes), from the Clusters' status.resourceSummary.`,
		Example: `  flotilla top pods -n shop
  flotilla top pods -A -C member1
  flotilla top nodes
  flotilla top clusters`,
		Args:      exactArgs(1, "pods, nodes or clusters"),
		ValidArgs: []string{"pods", "nodes", "clusters"},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context2(cmd, time.Minute)
			defer cancel()
			var what string
			switch args[0] {
			case "pod", "pods", "po":
				what = "pods"
			case "node", "nodes", "no":
				what = "nodes"
			case "cluster", "clusters":
				return topClusters(ctx, cmd.OutOrStdout(), cp, clusters)
			default:
				return fmt.Errorf("top %q: want pods, nodes or clusters", args[0])
			}
			if namespace == "" && !allNamespaces {
				namespace = cp.defaultNamespace()
			}
			targets, err := memberTargets(ctx, cp, clusters)
			if err != nil {
				return err
			}
			path := "/apis/metrics.k8s.io/v1beta1/nodes"
			if what == "pods" {
				path = "/apis/metrics.k8s.io/v1beta1/pods"
				if !allNamespaces {
					path = "/apis/metrics.k8s.io/v1beta1/namespaces/" + namespace + "/pods"
				}
			}
			q := url.Values{}
			if selector != "" {
				q.Set("labelSelector", selector)
			}
			type row struct{ cluster, namespace, name, cpu, mem string }
			var mu sync.Mutex
			var rows []row
			failed := 0
			var wg sync.WaitGroup
			for _, t := range targets {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var r []row
					if what == "pods" {
						list := &metricsv1beta1.PodMetricsList{}
						if err := getRaw(ctx, t, path, q, "application/json", list); err != nil {
							fmt.Fprintf(cmd.ErrOrStderr(), "error: cluster %s: metrics not available: %v\n", t.name, err)
							mu.Lock()
							failed++
							mu.Unlock()
							return
						}
						for _, p := range list.Items {
							var cpu, mem int64
							for _, c := range p.Containers {
								cpu += c.Usage.Cpu().MilliValue()
								mem += c.Usage.Memory().Value()
							}
							r = append(r, row{t.name, p.Namespace, p.Name, fmt.Sprintf("%dm", cpu), fmt.Sprintf("%dMi", mem/(1024*1024))})
						}
					} else {
						list := &metricsv1beta1.NodeMetricsList{}
						if err := getRaw(ctx, t, path, q, "application/json", list); err != nil {
							fmt.Fprintf(cmd.ErrOrStderr(), "error: cluster %s: metrics not available: %v\n", t.name, err)
							mu.Lock()
							failed++
							mu.Unlock()
							return
						}
						for _, n := range list.Items {
							r = append(r, row{t.name, "", n.Name, fmt.Sprintf("%dm", n.Usage.Cpu().MilliValue()), fmt.Sprintf("%dMi", n.Usage.Memory().Value()/(1024*1024))})
						}
					}
					mu.Lock()
					rows = append(rows, r...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			sort.Slice(rows, func(i, j int) bool {
				if rows[i].cluster != rows[j].cluster {
					return rows[i].cluster < rows[j].cluster
				}
				if rows[i].namespace != rows[j].namespace {
					return rows[i].namespace < rows[j].namespace
				}
				return rows[i].name < rows[j].name
			})
			if len(rows) == 0 && failed == len(targets) {
				return fmt.Errorf("metrics not available in %s: top reads the members' metrics.k8s.io API (metrics-server)", clusterNames(targets))
			}
			if len(rows) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "No resources found\n")
				if failed > 0 {
					return errReported
				}
				return nil
			}
			w := printers.GetNewTabWriter(cmd.OutOrStdout())
			if allNamespaces && what == "pods" {
				fmt.Fprintln(w, "NAMESPACE\tNAME\tCLUSTER\tCPU(cores)\tMEMORY(bytes)")
			} else {
				fmt.Fprintln(w, "NAME\tCLUSTER\tCPU(cores)\tMEMORY(bytes)")
			}
			for _, r := range rows {
				if allNamespaces && what == "pods" {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.namespace, r.name, r.cluster, r.cpu, r.mem)
				} else {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.name, r.cluster, r.cpu, r.mem)
				}
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if failed > 0 {
				return errReported // the failed members are named above
			}
			return nil
		},
	}
	cp.add(cmd)
	f := cmd.Flags()
	f.StringSliceVarP(&clusters, "clusters", "C", nil, "member clusters (default: every joined cluster)")
	f.StringVarP(&namespace, "namespace", "n", "", "namespace (default: the context's, else default)")
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "every namespace")
	f.StringVarP(&selector, "selector", "l", "", "label selector")
	return cmd
}

// topClusters prints each member's free room as the scheduler's general estimate sees it.
func topClusters(ctx context.Context, out io.Writer, cp controlPlaneFlags, names []string) error {
	cfg, err := cp.restConfig()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: controlplane.NewScheme()})
	if err != nil {
		return err
	}
	list := &clusterv1alpha1.ClusterList{}
	if err := c.List(ctx, list); err != nil {
		return fmt.Errorf("list the control plane's Clusters: %w", err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	w := printers.GetNewTabWriter(out)
	fmt.Fprintln(w, "NAME\tREADY\tNODES\tCPU(free/allocatable)\tMEMORY(free/allocatable)\tPODS(free/allocatable)\tGRADES")
	shown := 0
	for _, cl := range list.Items {
		if len(want) > 0 && !want[cl.Name] {
			continue
		}
		shown++
		ready := "Unknown"
		if cond := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
			ready = string(cond.Status)
		}
		nodes := "<none>"
		if ns := cl.Status.NodeSummary; ns != nil {
			nodes = fmt.Sprintf("%d/%d", ns.ReadyNum, ns.TotalNum)
		}
		cpu, mem, pods, grades := "<unknown>", "<unknown>", "<unknown>", "<none>"
		if rs := cl.Status.ResourceSummary; rs != nil {
			free := func(name corev1.ResourceName) (resource.Quantity, resource.Quantity) {
				a := rs.Allocatable[name]
				f := a.DeepCopy()
				for _, used := range []corev1.ResourceList{rs.Allocated, rs.Allocating} {
					if q, ok := used[name]; ok {
						f.Sub(q)
					}
				}
				return f, a
			}
			f, a := free(corev1.ResourceCPU)
			cpu = fmt.Sprintf("%dm/%dm", f.MilliValue(), a.MilliValue())
			f, a = free(corev1.ResourceMemory)
			mem = fmt.Sprintf("%dMi/%dMi", f.Value()/(1024*1024), a.Value()/(1024*1024))
			f, a = free(corev1.ResourcePods)
			pods = fmt.Sprintf("%d/%d", f.Value(), a.Value())
			var g []string
			for _, m := range rs.AllocatableModelings {
				if m.Count > 0 {
					g = append(g, fmt.Sprintf("%d:%d", m.Grade, m.Count))
				}
			}
			if len(g) > 0 {
				grades = strings.Join(g, ",")
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cl.Name, ready, nodes, cpu, mem, pods, grades)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if shown == 0 {
		return fmt.Errorf("no cluster to show: %s", map[bool]string{true: "none of " + strings.Join(names, ", ") + " is joined", false: "no cluster is joined"}[len(names) > 0])
	}
	return nil
}
