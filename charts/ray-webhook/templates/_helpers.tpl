{{/* The app name: the chart's, or nameOverride. */}}
{{- define "ray-webhook.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Name of every object: the Service name is a DNS label, hence 63. */}}
{{- define "ray-webhook.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "ray-webhook.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* What Helm adds to every object's labels. */}}
{{- define "ray-webhook.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "ray-webhook.labels" -}}
app.kubernetes.io/name: {{ include "ray-webhook.name" . }}
app.kubernetes.io/part-of: ray-webhook
{{ include "ray-webhook.helmLabels" . }}
{{- end -}}

{{/*
Selects the webhook's Pods (Deployment, Service, PDB, spread). The same as
deploy/'s, so a Deployment installed from deploy/ can be taken over by the
chart: a Deployment's selector cannot be changed.
*/}}
{{- define "ray-webhook.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ray-webhook.name" . }}
app.kubernetes.io/component: admission-webhook
{{- end -}}

{{- define "ray-webhook.secretName" -}}
{{- default (printf "%s-serving-cert" (include "ray-webhook.fullname" .)) .Values.certificates.secretName -}}
{{- end -}}

{{/* The names the API server calls the Service by: the serving certificate's SANs. */}}
{{- define "ray-webhook.dnsNames" -}}
{{- $svc := printf "%s.%s.svc" (include "ray-webhook.fullname" .) .Release.Namespace -}}
- {{ $svc }}
- {{ $svc }}.cluster.local
{{- if ne .Values.clusterDomain "cluster.local" }}
- {{ $svc }}.{{ .Values.clusterDomain }}
{{- end }}
{{- end -}}

{{/* The image reference. */}}
{{- define "ray-webhook.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
The part every webhook entry shares: the Service it calls, Pods on CREATE.
Takes a dict: fullname, namespace, port, path, caBundle, timeoutSeconds.
*/}}
{{- define "ray-webhook.clientConfig" }}
  clientConfig:
    service:
      name: {{ .fullname }}
      namespace: {{ .namespace }}
      path: {{ .path }}
      port: {{ .port }}
    {{- with .caBundle }}
    caBundle: {{ . }}
    {{- end }}
  rules:
  {{- if .rayObjects }}
  - apiGroups: ["ray.io"]
    apiVersions: ["v1", "v1alpha1"]
    operations: ["CREATE", "UPDATE"]
    resources: ["rayclusters", "rayjobs", "rayservices", "raycronjobs"]
    scope: Namespaced
  {{- else }}
  - apiGroups: [""]
    apiVersions: ["v1"]
    operations: ["CREATE"]
    resources: ["pods"]
    scope: Namespaced
  {{- end }}
  matchPolicy: Equivalent
  sideEffects: None
  admissionReviewVersions: ["v1", "v1beta1"]
  timeoutSeconds: {{ .timeoutSeconds }}
{{- end }}

{{/*
Which Pods the two Ray entries see: Ray Pods (ray.io/node-type head or worker)
outside the excluded namespaces. With matchConditions, the API server also
applies the server's own test of a Ray Pod (ray.io/cluster not empty) and
sends nothing else; with skipSettledWorkers, no worker that needs nothing. `false && error` is false in CEL, so a Pod without the
labels matches no condition instead of failing. Takes the dict of
ray-webhook.clientConfig plus excluded, matchConditions, skipSettledWorkers
and settledWorker (the expression).
*/}}
{{- define "ray-webhook.rayPodsOnly" }}
  namespaceSelector:
    matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: {{ toJson .excluded }}
  objectSelector:
    matchExpressions:
    - key: ray.io/node-type
      operator: In
      values: ["head", "worker"]
  {{- if or .matchConditions .skipSettledWorkers }}
  matchConditions:
  {{- if .matchConditions }}
  - name: ray-pod
    expression: >-
      has(object.metadata.labels)
      && 'ray.io/cluster' in object.metadata.labels && object.metadata.labels['ray.io/cluster'] != ''
      && 'ray.io/node-type' in object.metadata.labels && object.metadata.labels['ray.io/node-type'] in ['head', 'worker']
  {{- end }}
  {{- if .skipSettledWorkers }}
  # files/settled-worker.cel: false only for a worker that no rule would change,
  # refuse or warn about (deploy/README.md, "Settled workers").
  - name: not-a-settled-worker
    expression: |-
      {{- .settledWorker | nindent 6 }}
  {{- end }}
  {{- end }}
{{- end }}
