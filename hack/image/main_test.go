package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// file is what the test reads back of one layer entry.
type file struct {
	mode     int64
	uid, gid int
	data     string
	dir      bool
}

// TestImageFromFakeBinary builds an image from a small stand-in binary and
// reads the OCI layout (and the tarball) back: the config runs /flotilla as
// nonroot with the OCI labels, and the one layer holds the binary (0755),
// the nonroot user and group, and a sticky, world-writable /tmp.
func TestImageFromFakeBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "flotilla")
	if err := os.WriteFile(bin, []byte("#!fake flotilla\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Binary: bin, Out: filepath.Join(dir, "oci"), Tar: filepath.Join(dir, "flotilla.tar"),
		Tag: "ghcr.io/flotilla-io/flotilla:1.2.3", Version: "1.2.3", Arch: "amd64", Created: time.Unix(0, 0).UTC()}
	digest, err := Write(o)
	if err != nil {
		t.Fatal(err)
	}

	idx, err := layout.ImageIndexFromPath(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Digest != digest || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != o.Tag {
		t.Fatalf("index.json: want one image %s named %s, got %+v", digest, o.Tag, m.Manifests)
	}
	img, err := idx.Image(digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/flotilla"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if cf.Config.User != "65532:65532" || cf.Config.WorkingDir != "/" || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("user %q, working dir %q, platform %s/%s: want 65532:65532, /, linux/amd64", cf.Config.User, cf.Config.WorkingDir, cf.OS, cf.Architecture)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":  Source,
		"org.opencontainers.image.title":   "flotilla",
		"org.opencontainers.image.version": "1.2.3",
	} {
		if got := cf.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}

	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("want one layer, got %d (%v)", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[h.Name] = file{mode: h.Mode, uid: h.Uid, gid: h.Gid, data: string(data), dir: h.Typeflag == tar.TypeDir}
	}
	if f := files["flotilla"]; f.mode != 0o755 || f.data != "#!fake flotilla\n" {
		t.Errorf("/flotilla: mode %o, content %q; want 0755 and the binary's bytes", f.mode, f.data)
	}
	if f := files["etc/passwd"]; !strings.Contains(f.data, "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd lacks the nonroot user 65532:\n%s", f.data)
	}
	if f := files["etc/group"]; !strings.Contains(f.data, "nonroot:x:65532:") {
		t.Errorf("/etc/group lacks the nonroot group 65532:\n%s", f.data)
	}
	if f := files["tmp/"]; !f.dir || f.mode != 0o1777 {
		t.Errorf("/tmp: dir %v, mode %o; want a directory with mode 1777", f.dir, f.mode)
	}

	// The tarball holds the same image (the same config, so the same image
	// id; its manifest is docker's) under the tag.
	tag, _ := name.NewTag(o.Tag)
	fromTar, err := tarball.ImageFromPath(o.Tar, &tag)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := img.ConfigName()
	if got, err := fromTar.ConfigName(); err != nil || got != id {
		t.Errorf("tarball image id %s (%v), want %s", got, err, id)
	}

	// The same binary gives the same image.
	again, err := Write(o)
	if err != nil || again != digest {
		t.Errorf("rebuilt image %s (%v), want the same digest %s", again, err, digest)
	}
}
