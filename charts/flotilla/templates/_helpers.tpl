{{/* Names, labels and the pieces every component's pod shares. */}}

{{- define "flotilla.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every resource name: the release name, or
release-flotilla when the release name does not say flotilla already. Short
enough that "<prefix>-kube-controller-manager" fits a label value. */}}
{{- define "flotilla.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "flotilla.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels of one component; call with (dict "root" $ "component" "apiserver"). */}}
{{- define "flotilla.selectorLabels" -}}
app.kubernetes.io/name: {{ include "flotilla.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* All labels of one component's resources; same argument as selectorLabels. */}}
{{- define "flotilla.labels" -}}
{{ include "flotilla.selectorLabels" . }}
app.kubernetes.io/part-of: flotilla
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ include "flotilla.chart" .root }}
{{- end -}}

{{/* Labels of resources that belong to no one component (Secrets). */}}
{{- define "flotilla.commonLabels" -}}
app.kubernetes.io/name: {{ include "flotilla.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: flotilla
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ include "flotilla.chart" . }}
{{- end -}}

{{- define "flotilla.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* In-cluster names of the control plane's API server. */}}
{{- define "flotilla.apiserverHost" -}}
{{ include "flotilla.fullname" . }}-apiserver.{{ .Release.Namespace }}.svc.{{ .Values.clusterDomain }}
{{- end -}}

{{- define "flotilla.apiserverURL" -}}
https://{{ include "flotilla.apiserverHost" . }}:{{ .Values.apiserver.securePort }}
{{- end -}}

{{/* Whether the chart runs its own etcd. */}}
{{- define "flotilla.internalEtcd" -}}
{{- if not .Values.etcd.external.endpoints -}}true{{- end -}}
{{- end -}}

{{/* kube-apiserver's --etcd-servers: the external endpoints, or every
member of the chart's etcd by its stable name. */}}
{{- define "flotilla.etcdServers" -}}
{{- if .Values.etcd.external.endpoints -}}
{{- join "," .Values.etcd.external.endpoints -}}
{{- else -}}
{{- $full := include "flotilla.fullname" . -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.internal.replicas) -}}
{{- $urls = append $urls (printf "https://%s-etcd-%d.%s-etcd.%s.svc.%s:2379" $full $i $full $.Release.Namespace $.Values.clusterDomain) -}}
{{- end -}}
{{- join "," $urls -}}
{{- end -}}
{{- end -}}

{{/* Pod-level security: the image's nonroot user, volumes group-owned by it. */}}
{{- define "flotilla.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Container-level security, the same for every container of the chart. */}}
{{- define "flotilla.securityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Pull secrets, node selection, tolerations and affinity of one
component's pods; same argument as selectorLabels. */}}
{{- define "flotilla.scheduling" -}}
{{- $v := .root.Values -}}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if $v.affinity }}
  {{- toYaml $v.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "flotilla.selectorLabels" . | nindent 14 }}
{{- end }}
{{- end -}}

{{/* Pod metadata of one component; same argument as selectorLabels. */}}
{{- define "flotilla.podMetadata" -}}
labels:
  {{- include "flotilla.labels" . | nindent 2 }}
  {{- with .root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .root.Values.podAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* A kubeconfig for the control plane. Call with (dict "root" $ "user"
NAME "ca" PEM "cert" PEM "key" PEM) or with "token" instead of cert and key.
Its context is karmada-apiserver, as in Karmada's kubeconfigs. */}}
{{- define "flotilla.kubeconfig" -}}
apiVersion: v1
kind: Config
clusters:
  - name: flotilla
    cluster:
      server: {{ include "flotilla.apiserverURL" .root }}
      certificate-authority-data: {{ .ca | b64enc }}
users:
  - name: {{ .user }}
    user:
      {{- if .token }}
      token: {{ .token }}
      {{- else }}
      client-certificate-data: {{ .cert | b64enc }}
      client-key-data: {{ .key | b64enc }}
      {{- end }}
contexts:
  - name: karmada-apiserver
    context:
      cluster: flotilla
      user: {{ .user }}
current-context: karmada-apiserver
{{- end -}}

{{/* The volumes every component pod has: a writable /tmp (the root file
system is read-only). */}}
{{- define "flotilla.tmpVolume" -}}
- name: tmp
  emptyDir: {}
{{- end -}}

{{- define "flotilla.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* A PodDisruptionBudget for one component with more than one replica.
Call with (dict "root" $ "component" NAME "replicas" N "minAvailable" M). */}}
{{- define "flotilla.pdb" -}}
{{- if and .root.Values.podDisruptionBudget.enabled (gt (int .replicas) 1) }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "flotilla.fullname" .root }}-{{ .component }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "flotilla.labels" . | nindent 4 }}
spec:
  minAvailable: {{ .minAvailable | default 1 }}
  selector:
    matchLabels:
      {{- include "flotilla.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end -}}

{{/* A ServiceAccount of one component. The pods mount no token: they talk to
the control plane with their own kubeconfig, never to the host cluster. */}}
{{- define "flotilla.serviceAccount" -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "flotilla.fullname" .root }}-{{ .component }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "flotilla.labels" . | nindent 4 }}
automountServiceAccountToken: false
{{- end -}}

{{/* Names of the admission plugins the control plane's kube-apiserver turns
off: localstack.ControlPlaneDisabledAdmissionPlugins() (a Go test keeps the
two equal), plus Flotilla's own three when `flotilla webhook` does their
work. */}}
{{- define "flotilla.disabledAdmissionPlugins" -}}
{{- $off := list "LimitRanger" "ServiceAccount" "TaintNodesByCondition" "Priority" "DefaultTolerationSeconds" "DefaultStorageClass" "StorageObjectInUseProtection" "PodGroupProtection" "PersistentVolumeClaimResize" "RuntimeClass" "DefaultIngressClass" "PodTopologyLabels" "NodeDeclaredFeatureValidator" "PodResizeValidator" -}}
{{- if .Values.webhook.enabled -}}
{{- $off = concat $off (list "FlotillaPolicyClaim" "FlotillaDefaulting" "FlotillaValidation") -}}
{{- end -}}
{{- join "," $off -}}
{{- end -}}
