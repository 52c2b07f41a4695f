package localstack

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfigs writes, with certificates embedded so each file stands
// alone:
//   - <cluster dir>/admin.kubeconfig for each cluster's own components;
//   - <data-dir>/karmada.config with context karmada-apiserver;
//   - <data-dir>/members.config with one context per member.
//
// They are rewritten on every start because ports may change.
func WriteKubeconfigs(p *Plan) error {
	for _, c := range p.Clusters {
		if err := os.MkdirAll(c.Dir, 0o700); err != nil {
			return err
		}
		if err := writeKubeconfig(c.Kubeconfig, p.PKI, []namedServer{{"local", c.Server()}}); err != nil {
			return err
		}
	}
	cp := p.ControlPlane()
	if err := writeKubeconfig(p.KarmadaKubeconfig(), p.PKI, []namedServer{{ControlPlaneContext, cp.Server()}}); err != nil {
		return err
	}
	var members []namedServer
	for _, m := range p.Members() {
		members = append(members, namedServer{m.Name, m.Server()})
	}
	return writeKubeconfig(p.MembersKubeconfig(), p.PKI, members)
}

type namedServer struct{ name, server string }

func writeKubeconfig(path string, pki PKI, servers []namedServer) error {
	ca, err := os.ReadFile(pki.CACert)
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(pki.AdminCert)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(pki.AdminKey)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	for _, s := range servers {
		cfg.Clusters[s.name] = &clientcmdapi.Cluster{Server: s.server, CertificateAuthorityData: ca}
		cfg.AuthInfos[s.name] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
		cfg.Contexts[s.name] = &clientcmdapi.Context{Cluster: s.name, AuthInfo: s.name}
	}
	if len(servers) > 0 {
		cfg.CurrentContext = servers[0].name
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

// RESTConfig loads a client config for one context of a kubeconfig file.
// An empty context means the file's current context; an empty kubeconfig
// means $KUBECONFIG, else ~/.kube/config, else the in-cluster config.
func RESTConfig(kubeconfig, context string) (*rest.Config, error) {
	// Without a path, kubectl's rules: $KUBECONFIG, else ~/.kube/config,
	// else the in-cluster config.
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s (context %q): %w", kubeconfig, context, err)
	}
	// client-go's default of 5 requests/s throttles start-up work (CRD
	// installation, joining) for no benefit against our own API servers.
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}
