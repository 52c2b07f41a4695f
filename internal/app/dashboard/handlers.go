package dashboard

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

//go:embed web
var web embed.FS

// page is one page of the dashboard: its path, title, the kinds whose
// changes redraw it, and what it reads.
type page struct {
	Path, Title string
	Topics      []string
	view        func(s *Server, ctx context.Context, u *user, q url.Values) (any, error)
}

var pages = []page{
	{"/fleet", "Fleet", []string{"clusters"}, func(s *Server, ctx context.Context, u *user, _ url.Values) (any, error) {
		return s.fleet(ctx, u)
	}},
	{"/workloads", "Workloads", []string{"resourcebindings", "clusterresourcebindings", "clusters"}, func(s *Server, ctx context.Context, u *user, q url.Values) (any, error) {
		return s.workloads(ctx, u, workloadFilter{Namespace: q.Get("namespace"), Kind: q.Get("kind"), Policy: q.Get("policy"), Cluster: q.Get("cluster"), Health: q.Get("health")})
	}},
	{"/story", "Template", []string{"resourcebindings", "clusterresourcebindings", "clusters"}, func(s *Server, ctx context.Context, u *user, q url.Values) (any, error) {
		return s.story(ctx, u, q.Get("apiVersion"), q.Get("kind"), q.Get("namespace"), q.Get("name"))
	}},
	{"/policies", "Policies", []string{"propagationpolicies", "clusterpropagationpolicies", "overridepolicies", "clusteroverridepolicies", "resourcebindings", "clusterresourcebindings"}, func(s *Server, ctx context.Context, u *user, _ url.Values) (any, error) {
		return s.policies(ctx, u)
	}},
	{"/autoscaling", "Autoscaling", []string{"federatedhpas", "cronfederatedhpas"}, func(s *Server, ctx context.Context, u *user, _ url.Values) (any, error) {
		return s.autoscaling(ctx, u)
	}},
	{"/operations", "Operations", []string{"resourcebindings", "clusterresourcebindings", "workloadrebalancers", "clusters"}, func(s *Server, ctx context.Context, u *user, _ url.Values) (any, error) {
		return s.operations(ctx, u)
	}},
	{"/metrics", "Metrics", nil, func(s *Server, ctx context.Context, u *user, _ url.Values) (any, error) {
		return s.metrics(ctx, u)
	}},
}

// pageData is what the layout and every page template get.
type pageData struct {
	Page    page
	Pages   []page
	User    *user
	Topics  string
	Body    any
	Error   string
	Refresh int // seconds between redraws for pages no watch wakes; 0: none
}

var funcs = template.FuncMap{
	"join":  strings.Join,
	"lower": strings.ToLower,
	"query": url.QueryEscape,
	"pct":   func(p int) template.CSS { return template.CSS(fmt.Sprintf("width:%d%%", p)) },
}

// templates are parsed once: the layout, the sign-in page and one
// "content" per page.
type templates struct {
	layout map[string]*template.Template
	login  *template.Template
}

func parseTemplates() (*templates, error) {
	t := &templates{layout: map[string]*template.Template{}}
	base, err := template.New("base").Funcs(funcs).ParseFS(web, "web/layout.html")
	if err != nil {
		return nil, err
	}
	for _, p := range pages {
		c, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := c.ParseFS(web, "web"+p.Path+".html"); err != nil {
			return nil, err
		}
		t.layout[p.Path] = c
	}
	if t.login, err = template.New("login").Funcs(funcs).ParseFS(web, "web/login.html"); err != nil {
		return nil, err
	}
	return t, nil
}

// Handler serves the dashboard: the sign-in page, the pages, their event
// streams and the actions. Every response but /healthz, /login and the
// static files needs a signed-in user.
func (s *Server) Handler() http.Handler {
	tpl, err := parseTemplates()
	if err != nil {
		// The templates are embedded: a parse error is a build defect.
		panic(fmt.Sprintf("dashboard templates: %v", err))
	}
	static, _ := fs.Sub(web, "web/static")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		msg := ""
		if r.URL.Query().Get("expired") != "" {
			msg = "Your sign-in expired, or the dashboard restarted since (sign-ins live in its memory): sign in again."
		}
		s.loginPage(w, r, tpl, msg, http.StatusOK)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) { s.login(w, r, tpl) })
	mux.HandleFunc("POST /logout", s.logout)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/fleet", http.StatusFound) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprintf(w, `<!doctype html><title>Not found · Flotilla</title><link rel="stylesheet" href="/static/style.css">`+
			`<main><h1>Nothing here</h1><p>The dashboard has no page %s. Its pages: <a href="/fleet">Fleet</a>, <a href="/workloads">Workloads</a>, `+
			`<a href="/policies">Policies</a>, <a href="/autoscaling">Autoscaling</a>, <a href="/operations">Operations</a>, <a href="/metrics">Metrics</a>.</p></main>`,
			template.HTMLEscapeString(r.URL.Path))
	})
	for _, p := range pages {
		mux.HandleFunc("GET "+p.Path, s.authed(func(w http.ResponseWriter, r *http.Request, u *user) { s.render(w, r, u, tpl, p) }))
	}
	mux.HandleFunc("GET /live", s.authed(s.serveLive))
	mux.HandleFunc("POST /actions", s.authed(func(w http.ResponseWriter, r *http.Request, u *user) {
		// Only the page's script sends this header: a form on another site cannot.
		if r.Header.Get("X-Flotilla-Dashboard") != "action" {
			writeJSON(w, http.StatusForbidden, actionResponse{Error: "actions are sent by the dashboard's pages only"})
			return
		}
		s.serveAction(w, r, u)
	}))
	return secure(mux)
}

// secure adds the headers every answer carries: no framing, no inline
// scripts, no referrer to other sites.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// authed runs next as the request's user; without one, a page goes to
// the sign-in page and anything else gets 401.
func (s *Server) authed(next func(http.ResponseWriter, *http.Request, *user)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u := s.userOf(r)
		if u == nil {
			if r.Method == http.MethodGet && r.URL.Query().Get("fragment") == "" && r.URL.Path != "/live" {
				to := "/login?next=" + url.QueryEscape(r.URL.RequestURI())
				if _, err := r.Cookie(cookieName); err == nil {
					to += "&expired=1" // a session this dashboard no longer holds
				}
				http.Redirect(w, r, to, http.StatusFound)
				return
			}
			writeJSON(w, http.StatusUnauthorized, actionResponse{Error: "not signed in, or the sign-in expired: reload the page to sign in"})
			return
		}
		next(w, r, u)
	}
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, u *user, tpl *templates, p page) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	data := pageData{Page: p, Pages: pages, User: u, Topics: strings.Join(p.Topics, ",")}
	if p.Path == "/metrics" {
		data.Refresh = int(s.opts.ScrapeInterval.Seconds())
	}
	code := http.StatusOK
	body, err := p.view(s, ctx, u, r.URL.Query())
	var bad badRequest
	if errors.As(err, &bad) {
		data.Error = "This address is not one the dashboard can draw: " + bad.Error()
		code = http.StatusBadRequest
	} else if msg, denied := forbidden(err); denied {
		data.Error = fmt.Sprintf("RBAC does not let %s read what this page shows. The control plane said: %s", u.Name, msg)
		code = http.StatusForbidden
	} else if err != nil {
		klog.FromContext(ctx).V(2).Info("page failed", "page", p.Path, "user", u.Name, "err", err)
		data.Error = "The control plane did not answer as expected: " + err.Error()
		code = http.StatusBadGateway
	} else {
		data.Body = body
		if sv, ok := body.(*storyView); ok {
			data.Page.Title = sv.Kind + " " + qualified(sv.Namespace, sv.Name)
			if sv.Gone != "" {
				code = http.StatusNotFound
			}
		}
	}
	name := "layout"
	if r.URL.Query().Get("fragment") != "" {
		name = "content"
	}
	var buf bytes.Buffer
	if err := tpl.layout[p.Path].ExecuteTemplate(&buf, name, data); err != nil {
		klog.FromContext(ctx).Error(err, "render", "page", p.Path)
		http.Error(w, "the page could not be drawn; the dashboard's log says why", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = buf.WriteTo(w)
}

type loginData struct {
	Error, Next string
	ClientCA    bool
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, tpl *templates, msg string, code int) {
	if u := s.userOf(r); u != nil && msg == "" {
		http.Redirect(w, r, safeNext(r.FormValue("next")), http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = tpl.login.ExecuteTemplate(w, "login", loginData{Error: msg, Next: safeNext(r.FormValue("next")), ClientCA: s.clientCAs != nil})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request, tpl *templates) {
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	u, err := s.signIn(ctx, strings.TrimSpace(r.FormValue("token")))
	if err != nil {
		s.loginPage(w, r, tpl, err.Error(), http.StatusUnauthorized)
		return
	}
	id := s.sessions.add(u)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, Secure: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(s.opts.SessionTTL.Seconds())})
	http.Redirect(w, r, safeNext(r.FormValue("next")), http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		s.sessions.remove(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, Secure: true, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a post-sign-in address on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/fleet"
	}
	return next
}
