//go:build ignore

// Command mcsapi_copy copies the ServiceExport and ServiceImport CRDs of the Kubernetes
// multi-cluster services API (the Go module sigs.k8s.io/mcs-api, directory config/crd) into
// api/crds/bases, so that package crds can embed them next to the generated Karmada CRDs.
//
// It is run by `go generate ./api/...`:
//
//	go run ./crds/mcsapi_copy.go -version v0.4.1 -out crds/bases
//
// The module is fetched with `go mod download` from outside the Flotilla module, so go.mod and
// go.sum stay untouched; the download is verified against the Go checksum database as usual.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
)

// crdFiles are the CRD files of sigs.k8s.io/mcs-api that Karmada installs.
var crdFiles = []string{
	"multicluster.x-k8s.io_serviceexports.yaml",
	"multicluster.x-k8s.io_serviceimports.yaml",
}

func main() {
	version := flag.String("version", "", "sigs.k8s.io/mcs-api version to copy the CRDs from, for example v0.4.1")
	out := flag.String("out", "", "directory to write the CRD files to")
	flag.Parse()
	if *version == "" || *out == "" {
		log.Fatal("usage: go run mcsapi_copy.go -version vX.Y.Z -out DIR")
	}

	dir, err := moduleDir("sigs.k8s.io/mcs-api", *version)
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range crdFiles {
		src := filepath.Join(dir, "config", "crd", name)
		data, err := os.ReadFile(src)
		if err != nil {
			log.Fatalf("reading %s: %v", src, err)
		}
		header := fmt.Sprintf("# Copied unchanged from sigs.k8s.io/mcs-api@%s, config/crd/%s,\n"+
			"# by api/crds/mcsapi_copy.go (go generate ./api/...). Do not edit.\n", *version, name)
		dst := filepath.Join(*out, name)
		if err := os.WriteFile(dst, append([]byte(header), data...), 0o644); err != nil {
			log.Fatalf("writing %s: %v", dst, err)
		}
	}
}

// moduleDir downloads module@version into the module cache and returns its directory. It runs
// in a temporary directory so that no go.mod is consulted or changed.
func moduleDir(module, version string) (string, error) {
	tmp, err := os.MkdirTemp("", "mcsapi-copy-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)

	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v: %s", module, version, err, stderr.String())
	}
	var info struct {
		Dir   string
		Error string
	}
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		return "", fmt.Errorf("reading go mod download output: %w", err)
	}
	if info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, info.Error)
	}
	return info.Dir, nil
}
