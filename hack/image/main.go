// Command image builds Flotilla's container image without a container
// daemon: one layer holding the static `flotilla` binary, a passwd and group
// with the user nonroot (65532), and an empty /tmp, on no base image. It
// writes an OCI image layout and, with -tar, a tarball that `docker load`
// and `podman load` read. `make image` runs it.
//
//	go run ./hack/image -binary bin/image/flotilla -out bin/image/oci \
//	    -tar bin/image/flotilla.tar -tag ghcr.io/flotilla-io/flotilla:0.1.0 -version 0.1.0
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRootID is the user and group id the image runs as: distroless's
// "nonroot", which the Helm chart's securityContext also names.
const NonRootID = 65532

// Source is the image's org.opencontainers.image.source label.
const Source = "https://github.com/flotilla-io/flotilla"

// Options say what to build and where to write it.
type Options struct {
	// Binary is the path of a static linux `flotilla` binary.
	Binary string
	// Out is the directory of the OCI image layout; it is replaced.
	Out string
	// Tar, when set, is the path of a docker-compatible tarball.
	Tar string
	// Tag names the image: the layout's org.opencontainers.image.ref.name
	// annotation and the tarball's repository tag.
	Tag string
	// Version is the org.opencontainers.image.version label.
	Version string
	// Arch is the image's architecture (GOARCH spelling).
	Arch string
	// Created is the image's creation time and every file's modification
	// time; fixed, so that one binary always gives the same image digest.
	Created time.Time
}

func main() {
	o := Options{Created: time.Unix(0, 0).UTC()}
	flag.StringVar(&o.Binary, "binary", "", "path of the static linux flotilla binary (required)")
	flag.StringVar(&o.Out, "out", "", "directory to write the OCI image layout to; replaced (required)")
	flag.StringVar(&o.Tar, "tar", "", "also write a docker-compatible tarball (docker load, podman load) here")
	flag.StringVar(&o.Tag, "tag", "flotilla:dev", "image reference, e.g. ghcr.io/flotilla-io/flotilla:0.1.0")
	flag.StringVar(&o.Version, "version", "dev", "org.opencontainers.image.version label")
	flag.StringVar(&o.Arch, "arch", goarch(), "image architecture (default: $GOARCH, else this machine's)")
	flag.Parse()
	if o.Binary == "" || o.Out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: image -binary PATH -out DIR [-tar FILE] [-tag REF] [-version V] [-arch GOARCH]")
		os.Exit(2)
	}
	digest, err := Write(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", o.Tag, digest)
}

func goarch() string {
	if a := os.Getenv("GOARCH"); a != "" {
		return a
	}
	return runtime.GOARCH
}

// Write builds the image (Build) and writes it as o says. It returns the
// image's manifest digest. Errors: the binary cannot be read, the tag does
// not parse, or a file cannot be written.
func Write(o Options) (v1.Hash, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return v1.Hash{}, err
	}
	tag, err := name.NewTag(o.Tag)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("-tag: %w", err)
	}
	img, err := Build(bin, o)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(o.Out, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("write the OCI layout: %w", err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": o.Tag})); err != nil {
		return v1.Hash{}, fmt.Errorf("write the OCI layout: %w", err)
	}
	if o.Tar != "" {
		if err := tarball.WriteToFile(o.Tar, tag, img); err != nil {
			return v1.Hash{}, fmt.Errorf("write the tarball: %w", err)
		}
	}
	return digest, nil
}

// Build returns the image: empty.Image, one layer (Layer), and the config
// that runs /flotilla as nonroot. Its media types are OCI's.
func Build(binary []byte, o Options) (v1.Image, error) {
	data, err := Layer(binary, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: o.Created}, CreatedBy: "hack/image: /flotilla, /etc/passwd, /etc/group, /tmp", Comment: "flotilla " + o.Version,
	}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.Arch
	cf.Created = v1.Time{Time: o.Created}
	cf.Config.Entrypoint = []string{"/flotilla"}
	cf.Config.Cmd = nil
	cf.Config.User = fmt.Sprintf("%d:%d", NonRootID, NonRootID)
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{"PATH=/"}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.source":  Source,
		"org.opencontainers.image.title":   "flotilla",
		"org.opencontainers.image.version": o.Version,
		"org.opencontainers.image.description": "Flotilla: multi-cluster Kubernetes orchestration compatible with Karmada's APIs, " +
			"as one binary (control plane components, CLI, webhook, metrics adapter)",
	}
	return mutate.ConfigFile(img, cf)
}

// Layer returns the image's one layer as an uncompressed tar: /flotilla
// (0755), /etc/passwd and /etc/group with root and nonroot, nonroot's home
// /home/nonroot, and an empty /tmp (1777). Every entry has mtime modTime
// and is owned by root except the home directory.
func Layer(binary []byte, modTime time.Time) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRootID, NonRootID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRootID)
	entries := []struct {
		name     string
		mode     int64
		uid      int
		data     []byte
		typeflag byte
	}{
		{"etc/", 0o755, 0, nil, tar.TypeDir},
		{"etc/group", 0o644, 0, []byte(group), tar.TypeReg},
		{"etc/passwd", 0o644, 0, []byte(passwd), tar.TypeReg},
		{"flotilla", 0o755, 0, binary, tar.TypeReg},
		{"home/", 0o755, 0, nil, tar.TypeDir},
		{"home/nonroot/", 0o700, NonRootID, nil, tar.TypeDir},
		// The sticky bit (01000 in a tar header) lets every user write
		// there without removing others' files.
		{"tmp/", 0o1777, 0, nil, tar.TypeDir},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, Typeflag: e.typeflag,
			Size: int64(len(e.data)), ModTime: modTime}
		if e.uid == NonRootID {
			h.Uname, h.Gname = "nonroot", "nonroot"
		} else {
			h.Uname, h.Gname = "root", "root"
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
