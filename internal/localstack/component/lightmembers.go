package component

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler3"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	"k8s.io/kubernetes/pkg/controller/clusterroleaggregation"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
	serviceaccountcontroller "k8s.io/kubernetes/pkg/controller/serviceaccount"
	controlplaneapiserver "k8s.io/kubernetes/pkg/controlplane/apiserver"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

// LightMembersOptions configures RunLightMembers: one process, one embedded
// etcd, and one kube-apiserver per member on its own port and its own etcd
// key prefix.
type LightMembersOptions struct {
	Etcd EtcdOptions
	// HealthPort serves, over HTTPS on 127.0.0.1, /readyz (200 once every
	// member's API server answers and its controllers run, else 503 with
	// how many do; it names the paused ones), GET /members (each member
	// and its state: starting, ready or paused) and POST
	// /members/<name>/pause and /resume, which make one member
	// unreachable and reachable again (see pausableListener) for clients
	// presenting a certificate of ClientCA.
	HealthPort int
	// CertFile, KeyFile and ClientCA serve the health port.
	CertFile, KeyFile, ClientCA string
	// Parallel bounds how many API servers start at once: a start is
	// mostly CPU, and starting every member at once on a small machine
	// makes all of them late.
	Parallel int
	// Members are the hosted API servers, in start order.
	Members []LightMember
}

// LightMember is one hosted member: its name and its kube-apiserver flags
// (which set its port, certificates, --etcd-servers and --etcd-prefix).
type LightMember struct {
	Name string
	Args []string
}

// LightMembersGCPercent is the Go GC target (GOGC) of the light members'
// host, unless GOGC is set in the environment.
const LightMembersGCPercent = 100

// MemberIdentityLeaseRenewal is how often a hosted API server renews its
// identity Lease (kube-system/apiserver-<id>); kube-apiserver's 10 s,
// times a hundred members, would be ten writes a second on a stack at
// rest. The Lease lasts an hour, so renewing every 5 minutes keeps it.
const MemberIdentityLeaseRenewal = 5 * time.Minute

// hostedMember is a running member of RunLightMembers.
type hostedMember struct {
	LightMember
	// listener is set once the member listens (read by the health port).
	listener atomic.Pointer[pausableListener]
	ready    atomic.Bool
	// docs shares the built-in APIs' OpenAPI v3 documents with the
	// host's other members.
	docs *sharedOpenAPIV3
}

// sharedOpenAPIV3 hands the OpenAPI v3 documents of the built-in APIs,
// built once by the host's first member to start, to every other member.
// Light members serve the same built-in APIs (the same flags and runtime
// config), so the documents are the same; built per member they were the
// largest part of an idle member's heap and about a second of CPU at its
// start. Each member still builds its own documents for its
// CustomResourceDefinitions (the apiextensions server) and APIServices
// (the aggregator), and its own server-side apply models.
type sharedOpenAPIV3 struct {
	claimed atomic.Bool
	built   chan struct{} // closed once service is set
	service *handler3.OpenAPIService
}

func newSharedOpenAPIV3() *sharedOpenAPIV3 {
	return &sharedOpenAPIV3{built: make(chan struct{})}
}

// claim says whether the caller is the member that builds the documents
// (the first to ask); it must then call publish.
func (d *sharedOpenAPIV3) claim() bool { return d.claimed.CompareAndSwap(false, true) }

// publish hands the builder's documents (nil if it has none) to the others.
func (d *sharedOpenAPIV3) publish(service *handler3.OpenAPIService) {
	d.service = service
	close(d.built)
}

// wait returns the published documents (nil when the builder had none:
// then each member builds its own), or ctx's error if it ends first.
func (d *sharedOpenAPIV3) wait(ctx context.Context) (*handler3.OpenAPIService, error) {
	select {
	case <-d.built:
		return d.service, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// openAPIV3 returns how m's kube-apiserver gets its built-in OpenAPI v3
// documents: the first member of the host builds and publishes them
// (prepared), every other one skips building them (adjust) and serves
// the published ones on its own /openapi/v3 (prepared), where its
// aggregator and clients find them. It waits for the first member's
// documents; errors: ctx's.
func (m *hostedMember) openAPIV3(ctx context.Context) (adjust func(*apiserverapp.Config), prepared func(aggregator, kube *genericapiserver.GenericAPIServer), err error) {
	if m.docs.claim() {
		return lightConfig, func(aggregator, kube *genericapiserver.GenericAPIServer) {
			hideOpenAPIV2(aggregator, kube)
			m.docs.publish(kube.OpenAPIV3VersionedService)
		}, nil
	}
	shared, err := m.docs.wait(ctx)
	if err != nil || shared == nil {
		return lightConfig, hideOpenAPIV2, err
	}
	adjust = func(c *apiserverapp.Config) {
		lightConfig(c)
		c.KubeAPIs.ControlPlane.Generic.SkipOpenAPIInstallation = true
	}
	prepared = func(aggregator, kube *genericapiserver.GenericAPIServer) {
		hideOpenAPIV2(aggregator, kube)
		// Never fails: it only registers two handlers on the mux.
		_ = shared.RegisterOpenAPIV3VersionedService("/openapi/v3", kube.Handler.NonGoRestfulMux)
	}
	return adjust, prepared, nil
}

// runLightMembers parses `<host flags> -- <name> <kube-apiserver flags>
// -- <name> <kube-apiserver flags> ...` and runs RunLightMembers.
func runLightMembers(args []string) int {
	segments := splitOn(args, "--")
	fs := flag.NewFlagSet("light-members", flag.ContinueOnError)
	var o LightMembersOptions
	etcdFlags(fs, &o.Etcd)
	fs.IntVar(&o.HealthPort, "health-port", 0, "HTTPS port on 127.0.0.1 for /readyz and the pause and resume of one member")
	fs.StringVar(&o.CertFile, "tls-cert-file", "", "serving certificate of the health port")
	fs.StringVar(&o.KeyFile, "tls-private-key-file", "", "key of the serving certificate")
	fs.StringVar(&o.ClientCA, "client-ca-file", "", "CA of the client certificates allowed to pause and resume members")
	fs.IntVar(&o.Parallel, "parallel", 2, "API servers started at once")
	if err := fs.Parse(segments[0]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 2
	}
	for _, seg := range segments[1:] {
		if len(seg) == 0 {
			fmt.Fprintln(os.Stderr, "error: each member is `-- <name> <kube-apiserver flags>`; a name is missing")
			return 2
		}
		o.Members = append(o.Members, LightMember{Name: seg[0], Args: seg[1:]})
	}
	if len(o.Members) == 0 || o.Etcd.DataDir == "" || o.HealthPort == 0 {
		fmt.Fprintln(os.Stderr, "error: give --etcd-data-dir, --health-port and at least one `-- <name> <kube-apiserver flags>`")
		return 2
	}
	if err := RunLightMembers(o); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}

// splitOn splits args at every sep; the result has one more element than
// there are seps.
func splitOn(args []string, sep string) [][]string {
	out := [][]string{{}}
	for _, a := range args {
		if a == sep {
			out = append(out, []string{})
			continue
		}
		out[len(out)-1] = append(out[len(out)-1], a)
	}
	return out
}

// RunLightMembers starts one etcd, then every member's kube-apiserver (at
// most o.Parallel at once) with the controllers a member needs running in
// process (namespace deletion, service-account token Secrets, ClusterRole
// aggregation), and serves the health port; it returns when SIGTERM or
// SIGINT stops them all, or with the error of the first member whose API
// server fails. Members share the etcd but never each other's keys: each
// API server has its own --etcd-prefix.
func RunLightMembers(o LightMembersOptions) error {
	if os.Getenv("GOGC") == "" {
		// The live heap is most of this process's memory (about 30 MiB
		// per member). Collecting at half the live heap kept a hundred
		// members 0.7 GiB smaller, but under propagation to all of them
		// each cycle marks some 3 GiB, and twice as many cycles made
		// the 1/s p99 to the last member 5.0 s instead of 3.6 s.
		debug.SetGCPercent(LightMembersGCPercent)
	}
	controlplaneapiserver.IdentityLeaseRenewIntervalPeriod = MemberIdentityLeaseRenewal
	ctx, cancel := signalContext()
	defer cancel()
	e, err := StartEtcd(o.Etcd)
	if err != nil {
		return err
	}
	defer e.Close()

	members := make([]*hostedMember, len(o.Members))
	docs := newSharedOpenAPIV3()
	for i, m := range o.Members {
		members[i] = &hostedMember{LightMember: m, docs: docs}
	}
	health, err := serveLightHealth(o, members)
	if err != nil {
		return err
	}
	defer health.Close()

	failed := make(chan error, len(members))
	go func() {
		if err := <-e.Err(); err != nil {
			failed <- fmt.Errorf("etcd stopped: %w", err)
		}
	}()
	sem := make(chan struct{}, max(o.Parallel, 1))
	var wg sync.WaitGroup
	for _, m := range members {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The slot frees once the member is ready, or has failed.
			released := false
			release := func() {
				if !released {
					released = true
					<-sem
				}
			}
			err := m.run(ctx, release)
			release()
			if err != nil && ctx.Err() == nil {
				failed <- fmt.Errorf("member %s: %w", m.Name, err)
			}
		}()
	}
	select {
	case <-ctx.Done():
	case err = <-failed:
		cancel()
	}
	wg.Wait()
	return err
}

// run serves m's API server until ctx ends; ready is called once the API
// server answers and m's controllers run (the caller also calls it when run
// returns, so it must be idempotent).
func (m *hostedMember) run(ctx context.Context, ready func()) error {
	s := options.NewServerRunOptions()
	flags := pflag.NewFlagSet(m.Name, pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		flags.AddFlagSet(f)
	}
	if err := flags.Parse(m.Args); err != nil {
		return fmt.Errorf("kube-apiserver flags: %w", err)
	}
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return err
	}
	addr := net.JoinHostPort(s.SecureServing.BindAddress.String(), fmt.Sprint(s.SecureServing.BindPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	pl := newPausableListener(ln)
	m.listener.Store(pl)
	s.SecureServing.Listener = pl
	completed, err := s.Complete(ctx)
	if err != nil {
		return err
	}
	// After Complete, which would otherwise make a certificate of its own.
	if err := staticCertificates(s); err != nil {
		return err
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return utilerrors.NewAggregate(errs)
	}
	adjust, prepared, err := m.openAPIV3(ctx)
	if err != nil {
		return err
	}
	loopback, run, err := newAPIServer(completed, prepared, adjust)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- run(ctx) }()
	if err := waitReady(ctx, loopback, served); err != nil {
		return err
	}
	if err := runMemberControllers(ctx, loopback, s.ServiceAccountSigningKeyFile, s.Authentication.ClientCert.ClientCA); err != nil {
		return err
	}
	m.ready.Store(true)
	ready()
	return <-served
}

// staticCertificates gives s its serving certificate and client CA from
// memory, read once from the files its flags name: kube-apiserver watches
// each certificate file it is given with an inotify instance of its own,
// and a hundred members would use up the instances a Linux user has (128
// by default), which every other program of that user needs too. The
// stack's certificates do not change while it runs. Errors: reading or
// parsing the files.
func staticCertificates(s *options.ServerRunOptions) error {
	if ca := s.Authentication.ClientCert.ClientCA; ca != "" {
		bundle, err := os.ReadFile(ca)
		if err != nil {
			return fmt.Errorf("client CA: %w", err)
		}
		provider, err := dynamiccertificates.NewStaticCAContent("client-ca", bundle)
		if err != nil {
			return fmt.Errorf("client CA %s: %w", ca, err)
		}
		s.Authentication.ClientCert.CAContentProvider = provider
	}
	files := s.SecureServing.ServerCert.CertKey
	if files.CertFile == "" || files.KeyFile == "" {
		return nil
	}
	cert, err := os.ReadFile(files.CertFile)
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	key, err := os.ReadFile(files.KeyFile)
	if err != nil {
		return fmt.Errorf("serving key: %w", err)
	}
	provider, err := dynamiccertificates.NewStaticCertKeyContent("serving-cert", cert, key)
	if err != nil {
		return fmt.Errorf("serving certificate %s: %w", files.CertFile, err)
	}
	s.SecureServing.ServerCert.GeneratedCert = provider
	s.SecureServing.ServerCert.CertKey = genericoptions.CertKey{}
	return nil
}

// lightConfig is how a light member's kube-apiserver differs from a
// member's own: no OpenAPI v2 for the built-in APIs (withoutOpenAPIV2)
// and OpenAPI definitions shared with the host's other members
// (shareOpenAPIDefinitions).
func lightConfig(c *apiserverapp.Config) {
	withoutOpenAPIV2(c)
	shareOpenAPIDefinitions(c)
}

// sharedDefinitions holds the OpenAPI definitions the host's members
// share, by slot and reference form (see shared).
var sharedDefinitions struct {
	mu   sync.Mutex
	defs map[string]map[string]openapicommon.OpenAPIDefinition
}

// shareOpenAPIDefinitions makes the OpenAPI definitions of c's servers
// (every built-in type's schema, about 7 MiB per member, kept by the
// OpenAPI v3 configuration, the server-side apply models and CEL) one set
// per host: every light member builds the same ones.
func shareOpenAPIDefinitions(c *apiserverapp.Config) {
	seen := map[*openapicommon.OpenAPIV3Config]bool{}
	for _, slot := range []struct {
		name   string
		config *openapicommon.OpenAPIV3Config
	}{
		{"kube", c.KubeAPIs.ControlPlane.Generic.OpenAPIV3Config},
		{"apiextensions", c.ApiExtensions.GenericConfig.OpenAPIV3Config},
		{"aggregator", c.Aggregator.GenericConfig.OpenAPIV3Config},
	} {
		v3 := slot.config
		if v3 == nil || seen[v3] {
			continue
		}
		seen[v3] = true
		if v3.Definitions != nil {
			// Built already, by the configuration's constructor.
			built := v3.Definitions
			v3.Definitions = shared(slot.name+" definitions", func() map[string]openapicommon.OpenAPIDefinition { return built })
		}
		if get := v3.GetDefinitions; get != nil {
			v3.GetDefinitions = shareDefinitions(slot.name, get)
		}
	}
	if v2 := c.ApiExtensions.GenericConfig.OpenAPIConfig; v2 != nil && v2.GetDefinitions != nil {
		v2.GetDefinitions = shareDefinitions("apiextensions-v2", v2.GetDefinitions)
	}
}

// definitionsProbe is a type whose reference tells reference callbacks
// apart: OpenAPI v2 ones give "#/definitions/...", v3 ones
// "#/components/schemas/...".
const definitionsProbe = "k8s.io/api/core/v1.Pod"

// shareDefinitions returns get, called once per slot and form of
// reference in this process (see shared).
func shareDefinitions(slot string, get openapicommon.GetOpenAPIDefinitions) openapicommon.GetOpenAPIDefinitions {
	return func(ref openapicommon.ReferenceCallback) map[string]openapicommon.OpenAPIDefinition {
		probe := ref(definitionsProbe)
		return shared(slot+" "+probe.String(), func() map[string]openapicommon.OpenAPIDefinition { return get(ref) })
	}
}

// shared returns the definitions kept under key, made by build the first
// time. The definitions themselves are shared; each caller gets its own
// map and its own copy of each schema's top-level extensions, which the
// OpenAPI builders write to (they add the group-version-kind and drop the
// embedded v2 schema), so that members starting at once never write to
// the same map.
func shared(key string, build func() map[string]openapicommon.OpenAPIDefinition) map[string]openapicommon.OpenAPIDefinition {
	sharedDefinitions.mu.Lock()
	defs, ok := sharedDefinitions.defs[key]
	if !ok {
		defs = build()
		if sharedDefinitions.defs == nil {
			sharedDefinitions.defs = map[string]map[string]openapicommon.OpenAPIDefinition{}
		}
		sharedDefinitions.defs[key] = defs
	}
	sharedDefinitions.mu.Unlock()
	out := make(map[string]openapicommon.OpenAPIDefinition, len(defs))
	for name, def := range defs {
		if def.Schema.Extensions != nil {
			def.Schema.Extensions = maps.Clone(def.Schema.Extensions)
		}
		out[name] = def
	}
	return out
}

// withoutOpenAPIV2 keeps a light member from building /openapi/v2 for
// the built-in APIs and from aggregating it: the v2 documents, built and
// aggregated per server, were a third of an idle member's memory, and
// kubectl reads v3 (apply's validation, explain), which stays. The
// apiextensions server keeps its small v2 document (its own group and the
// CustomResourceDefinitions): it runs the controller that publishes each
// CRD's v3 document only beside the v2 one. hideOpenAPIV2 then keeps that
// partial v2 document from being served.
func withoutOpenAPIV2(c *apiserverapp.Config) {
	c.Aggregator.GenericConfig.OpenAPIConfig = nil
	c.KubeAPIs.ControlPlane.Generic.OpenAPIConfig = nil
}

// hideOpenAPIV2 answers 404 to /openapi/v2 at the front of a light
// member's chain, as an API server that serves no v2 does, instead of
// passing it to the apiextensions server, whose v2 document lacks the
// built-in APIs (see withoutOpenAPIV2).
func hideOpenAPIV2(aggregator, _ *genericapiserver.GenericAPIServer) {
	aggregator.Handler.NonGoRestfulMux.Handle("/openapi/v2", http.NotFoundHandler())
}

// waitReady polls the API server's /readyz until it answers ok, it stops
// (served), or ctx ends.
func waitReady(ctx context.Context, cfg *rest.Config, served <-chan error) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		status := 0
		cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
		if status == http.StatusOK {
			return nil
		}
		select {
		case err := <-served:
			if err == nil {
				err = errors.New("the API server stopped before it was ready")
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// runMemberControllers starts, against the member's API server, the
// kube-controller-manager controllers a bare member keeps: namespace
// deletion, service-account token Secrets (join asks the member for one)
// and ClusterRole aggregation. The garbage collector is left out: it
// watches every resource of the member, which is most of an idle member's
// cost, and nothing on a member without workload controllers makes
// dependents.
func runMemberControllers(ctx context.Context, cfg *rest.Config, saKeyFile, rootCAFile string) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	logger := klog.FromContext(ctx)

	ns := namespacecontroller.NewNamespaceController(ctx, cs, md, cs.Discovery().ServerPreferredNamespacedResources,
		factory.Core().V1().Namespaces(), 5*time.Minute, v1.FinalizerKubernetes)

	var tokens *serviceaccountcontroller.TokensController
	if saKeyFile != "" {
		key, err := keyutil.PrivateKeyFromFile(saKeyFile)
		if err != nil {
			return fmt.Errorf("read the service-account signing key: %w", err)
		}
		gen, err := serviceaccount.JWTTokenGenerator(serviceaccount.LegacyIssuer, key)
		if err != nil {
			return err
		}
		var rootCA []byte
		if rootCAFile != "" {
			if rootCA, err = os.ReadFile(rootCAFile); err != nil {
				return fmt.Errorf("read the root CA: %w", err)
			}
		}
		tokens, err = serviceaccountcontroller.NewTokensController(logger, factory.Core().V1().ServiceAccounts(), factory.Core().V1().Secrets(), cs,
			serviceaccountcontroller.TokensControllerOptions{TokenGenerator: gen, RootCA: rootCA})
		if err != nil {
			return err
		}
	}
	roles := clusterroleaggregation.NewClusterRoleAggregation(factory.Rbac().V1().ClusterRoles(), cs.RbacV1())
	factory.Start(ctx.Done())
	go ns.Run(ctx, 2)
	if tokens != nil {
		go tokens.Run(ctx, 2)
	}
	go roles.Run(ctx, 1)
	return nil
}

// serveLightHealth serves o.HealthPort (see LightMembersOptions).
func serveLightHealth(o LightMembersOptions, members []*hostedMember) (*http.Server, error) {
	byName := map[string]*hostedMember{}
	for _, m := range members {
		byName[m.Name] = m
	}
	mux := http.NewServeMux()
	ready := func(w http.ResponseWriter, _ *http.Request) {
		var n int
		var waiting, paused []string
		for _, m := range members {
			if m.ready.Load() {
				n++
			} else if len(waiting) < 5 {
				waiting = append(waiting, m.Name)
			}
			if l := m.listener.Load(); l != nil && l.Paused() {
				paused = append(paused, m.Name)
			}
		}
		if n < len(members) {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "%d of %d member API servers ready; waiting for %s\n", n, len(members), strings.Join(waiting, ", "))
			return
		}
		if len(paused) == 0 {
			fmt.Fprintf(w, "ok: %d member API servers ready", n)
		} else {
			fmt.Fprintf(w, "ok: %d member API servers up, %d of them paused (unreachable on purpose): %s", n, len(paused), strings.Join(paused, ", "))
		}
		fmt.Fprintln(w)
	}
	mux.HandleFunc("GET /readyz", ready)
	mux.HandleFunc("GET /healthz", ready)
	// GET /members lists the hosted members, one per line: name, state.
	mux.HandleFunc("GET /members", func(w http.ResponseWriter, _ *http.Request) {
		for _, m := range members {
			state := "starting"
			if l := m.listener.Load(); l != nil && l.Paused() {
				state = "paused"
			} else if m.ready.Load() {
				state = "ready"
			}
			fmt.Fprintf(w, "%s\t%s\n", m.Name, state)
		}
	})
	mux.HandleFunc("GET /members/{name}/{action}", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("use POST to %s a member", r.PathValue("action")), http.StatusMethodNotAllowed)
	})
	mux.HandleFunc("POST /members/{name}/{action}", func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			http.Error(w, "a client certificate of the stack's CA is needed to pause or resume a member", http.StatusUnauthorized)
			return
		}
		m := byName[r.PathValue("name")]
		var l *pausableListener
		if m != nil {
			l = m.listener.Load()
		}
		if l == nil {
			http.Error(w, fmt.Sprintf("no member %q is hosted here (or it has not started yet)", r.PathValue("name")), http.StatusNotFound)
			return
		}
		switch r.PathValue("action") {
		case "pause":
			l.Pause()
		case "resume":
			l.Resume()
		default:
			http.Error(w, "the action is pause or resume", http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, "%s: %sd\n", m.Name, r.PathValue("action"))
	})
	cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("load the health port's certificate: %w", err)
	}
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
	if o.ClientCA != "" {
		ca, err := os.ReadFile(o.ClientCA)
		if err != nil {
			return nil, fmt.Errorf("read the client CA: %w", err)
		}
		tlsCfg.ClientCAs = x509.NewCertPool()
		tlsCfg.ClientCAs.AppendCertsFromPEM(ca)
	}
	ln, err := tls.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", o.HealthPort), tlsCfg)
	if err != nil {
		return nil, fmt.Errorf("listen on the health port: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}

// pausableListener is a member's listener that can make the member
// unreachable the way a stopped process is: paused, it closes every open
// connection and holds new ones without answering, so clients time out;
// resumed, it closes the held ones (their clients reconnect) and serves
// again.
type pausableListener struct {
	net.Listener
	mu     sync.Mutex
	paused bool
	open   map[net.Conn]struct{}
	held   []net.Conn
}

func newPausableListener(l net.Listener) *pausableListener {
	return &pausableListener{Listener: l, open: map[net.Conn]struct{}{}}
}

// Accept returns the next connection accepted while not paused.
func (l *pausableListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.paused {
			l.held = append(l.held, c)
			l.mu.Unlock()
			continue
		}
		tc := &trackedConn{Conn: c, l: l}
		l.open[tc] = struct{}{}
		l.mu.Unlock()
		return tc, nil
	}
}

// Pause closes the open connections and holds new ones unanswered.
func (l *pausableListener) Pause() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paused = true
	for c := range l.open {
		_ = c.(*trackedConn).Conn.Close()
		delete(l.open, c)
	}
}

// Paused reports whether the listener is paused.
func (l *pausableListener) Paused() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.paused
}

// Resume closes the held connections and serves new ones again.
func (l *pausableListener) Resume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paused = false
	for _, c := range l.held {
		_ = c.Close()
	}
	l.held = nil
}

type trackedConn struct {
	net.Conn
	l    *pausableListener
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.open, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// etcdFlags binds the embedded etcd's flags (--etcd-name, --etcd-data-dir,
// --etcd-client-port, --etcd-peer-port, --etcd-log-file) to o.
func etcdFlags(fs *flag.FlagSet, o *EtcdOptions) {
	fs.StringVar(&o.Name, "etcd-name", "default", "etcd member name")
	fs.StringVar(&o.DataDir, "etcd-data-dir", "", "etcd data directory of the embedded etcd; empty runs none (give kube-apiserver --etcd-servers)")
	fs.IntVar(&o.ClientPort, "etcd-client-port", 2379, "etcd client port on 127.0.0.1")
	fs.IntVar(&o.PeerPort, "etcd-peer-port", 2380, "etcd peer port on 127.0.0.1")
	fs.StringVar(&o.LogFile, "etcd-log-file", "", "etcd log file")
}
