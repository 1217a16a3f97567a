# ray-webhook container image.
#   docker build -t ray-webhook:0.1.0 .
# The runtime stage holds the binary, the shared libraries `ldd` says it needs
# beyond the base image, and nothing else. Where the binary comes from:
#   BINARY=source   (the default) the build stage installs the Debian -dev
#                   packages and builds exactly as scripts/build.sh does (it
#                   runs that script, which trains the profile-guided build of
#                   the core on the review fixtures in tests/fixtures/reviews/);
#   BINARY=context  the context's build/ray-webhook, which scripts/build.sh
#                   built on Debian 12 from the same sources (scripts/image.sh
#                   passes it when its caller has just built the commit): the
#                   same program without compiling it a second time. Only the
#                   runtime libraries are installed to find what it loads.
# Both stages come from the same Debian 12 image as the runtime stage.
ARG DEBIAN_IMAGE=debian:bookworm-slim
ARG BINARY=source

FROM ${DEBIAN_IMAGE} AS binary-source
WORKDIR /src
# The package list lives in scripts/install-deps.sh; installing before copying
# the sources keeps this layer cached across source changes.
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY CMakeLists.txt ./
COPY include/ include/
COPY src/ src/
COPY pgo/ pgo/
COPY tests/fixtures/reviews/ tests/fixtures/reviews/
COPY scripts/build.sh scripts/build-with-profile.sh scripts/
# scripts/build-with-profile.sh build -DCMAKE_BUILD_TYPE=Release -DRAY_WEBHOOK_BUILD_TESTS=OFF
# cmake --build build -j2
RUN bash scripts/build.sh

FROM ${DEBIAN_IMAGE} AS binary-context
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh --runtime && rm -rf /var/lib/apt/lists/*
COPY build/ray-webhook build/

FROM binary-${BINARY} AS staged
# Stage the binary and every shared library it loads, except those that come
# with the runtime base image (glibc, libgcc_s, libstdc++, zlib): cpp-httplib,
# OpenSSL 3, fmt, simdjson, prometheus-cpp, brotli, whatever ldd lists (spdlog
# is compiled in from its headers). bundled-libraries.tsv names the Debian
# package and version each came from, for the image's bill of materials.
RUN set -eu; \
    mkdir -p /out/usr/local/bin /out/usr/local/lib/ray-webhook /out/usr/local/share/ray-webhook /out/etc/ld.so.conf.d; \
    cp build/ray-webhook /out/usr/local/bin/; \
    strip --strip-unneeded /out/usr/local/bin/ray-webhook; \
    for lib in $(ldd build/ray-webhook | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do \
      case "${lib##*/}" in \
        libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libgcc_s.so.*|libstdc++.so.*|libz.so.*) ;; \
        *) cp -L "$lib" /out/usr/local/lib/ray-webhook/; \
         pkg=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "/usr$lib"); \
         pkg=${pkg%%:*}; \
         printf '%s\t%s\t%s\n' "${lib##*/}" "$pkg" "$(dpkg-query -W -f '${Version}' "$pkg")" \
           >> /out/usr/local/share/ray-webhook/bundled-libraries.tsv ;; \
      esac; \
    done; \
    echo /usr/local/lib/ray-webhook > /out/etc/ld.so.conf.d/ray-webhook.conf

FROM ${DEBIAN_IMAGE}
LABEL org.opencontainers.image.title="ray-webhook" \
      org.opencontainers.image.description="Kubernetes admission webhook for the Pods of KubeRay clusters"
COPY --from=staged /out/ /
# Fails the image build when a library is missing.
# (ldconfig's aux-cache holds inode numbers and times: dropped, so that two
# builds of one commit give one image.)
RUN ldconfig \
 && rm -f /var/cache/ldconfig/aux-cache \
 && if ldd /usr/local/bin/ray-webhook | grep 'not found'; then exit 1; fi \
 && ray-webhook --version
# A numeric, non-root user, so Kubernetes' runAsNonRoot can check it.
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["ray-webhook", "serve", "--cert-dir", "/tmp/k8s-webhook-server/serving-certs"]
