package localstack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// PauseLightMember makes light member name of the stack in dataDir
// unreachable (pause true), as if its API server process had stopped:
// its open connections close and new ones get no answer. With pause false
// it serves again. The member's data and the other members are untouched.
// Errors: the stack has no light members, the member is not one of them,
// or the host does not answer.
func PauseLightMember(ctx context.Context, dataDir, name string, pause bool) error {
	ports, err := LoadRecordedPorts(dataDir)
	if err != nil {
		return err
	}
	port, ok := ports.recorded[LightMembersName+"/health"]
	if !ok {
		return fmt.Errorf("the stack in %s has no light members (start it with --light-members)", dataDir)
	}
	pki := PKIPaths(dataDir)
	cert, err := tls.LoadX509KeyPair(pki.AdminCert, pki.AdminKey)
	if err != nil {
		return fmt.Errorf("load the stack's admin certificate: %w", err)
	}
	ca, err := os.ReadFile(pki.CACert)
	if err != nil {
		return fmt.Errorf("read the stack's CA: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	action := "resume"
	if pause {
		action = "pause"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("https://127.0.0.1:%d/members/%s/%s", port, name, action), nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", action, name, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", action, name, strings.TrimSpace(string(body)))
	}
	return nil
}
