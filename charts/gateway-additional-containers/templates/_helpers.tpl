{{/* The gateway's name: the release name, as istio/gateway does without a `name` value. */}}
{{- define "gateway.name" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
Pod selector labels, the same as istio/gateway's: `app: <name>`, `istio: <name without istio->`.
gracegate's health Service, PodDisruptionBudget and anti-affinity select the pods by these.
*/}}
{{- define "gateway.selectorLabels" -}}
app: {{ include "gateway.name" . }}
istio: {{ include "gateway.name" . | trimPrefix "istio-" }}
{{- end }}

{{- define "gateway.labels" -}}
{{ include "gateway.selectorLabels" . }}
app.kubernetes.io/name: {{ include "gateway.name" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}
