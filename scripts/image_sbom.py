#!/usr/bin/env python3
"""The software bill of materials of the ray-webhook image, as SPDX 2.3 JSON.

Reads the image's root filesystem (ROOT): the Debian packages its files came
from, as the image records them (one dpkg status record per package in
var/lib/dpkg/status.d/, and PACKAGE.md5sums naming the files it ships), and
ray-webhook itself. Prints the document on stdout; the same image gives the
same document (no clock is read: created is --epoch).
"""
import argparse
import datetime
import json
import os
import sys

STATUS_D = "var/lib/dpkg/status.d"


def dpkg_packages(root):
    """(name, version, arch, files) of each package of ROOT's status.d."""
    folder = os.path.join(root, STATUS_D)
    packages = []
    for entry in sorted(os.listdir(folder)):
        if entry.endswith(".md5sums"):
            continue
        fields = {}
        with open(os.path.join(folder, entry), encoding="utf-8") as record:
            for line in record:
                if line.strip() and not line[0].isspace() and ":" in line:
                    key, value = line.split(":", 1)
                    fields[key] = value.strip()
        if not fields.get("Status", "").endswith(" installed") or fields.get("Package") != entry:
            sys.exit(f"{STATUS_D}/{entry}: not the installed package's record ({fields.get('Package')!r})")
        files = []
        sums = os.path.join(folder, entry + ".md5sums")
        if os.path.exists(sums):
            with open(sums, encoding="utf-8") as listing:
                files = ["/" + line.split(None, 1)[1].strip() for line in listing if line.strip()]
        packages.append((fields["Package"], fields["Version"], fields.get("Architecture", "all"), files))
    return packages


def spdx_id(kind, name):
    safe = "".join(c if c.isalnum() or c in ".-" else "-" for c in name)
    return f"SPDXRef-{kind}-{safe}"


def deb_purl(name, version, arch):
    return f"pkg:deb/debian/{name}@{version}?arch={arch}&distro=debian-12"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--revision", required=True)
    ap.add_argument("--digest", required=True)
    ap.add_argument("--epoch", type=int, required=True)
    a = ap.parse_args()

    created = datetime.datetime.fromtimestamp(a.epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    own = spdx_id("Package", a.name)

    def package(name, ident, version, **extra):
        """An SPDX package whose licenses and copyright this document does not assert."""
        return {"name": name, "SPDXID": ident, "versionInfo": version, "downloadLocation": "NOASSERTION",
                "filesAnalyzed": False, "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",
                "copyrightText": "NOASSERTION", **extra}

    def debian(name, ident, version, arch, **extra):
        return package(name, ident, version, supplier="Organization: Debian",
                       externalRefs=[{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                                      "referenceLocator": deb_purl(name, version, arch)}], **extra)

    packages = [package(a.name, own, a.version,
                        comment=f"revision {a.revision}; image {a.digest}; /usr/local/bin/{a.name}")]
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": own}]

    def relate(kind, ident):
        relationships.append({"spdxElementId": own, "relationshipType": kind, "relatedSpdxElement": ident})

    for name, version, pkg_arch, files in dpkg_packages(a.root):
        packages.append(debian(name, spdx_id("Deb", name), version, pkg_arch,
                               comment="files: " + ", ".join(files)))
        relate("CONTAINS", spdx_id("Deb", name))
    document = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{a.name}-{a.version}",
        "documentNamespace": f"urn:{a.name}:spdx:{a.version}:{a.revision}",
        "creationInfo": {"created": created, "creators": [f"Tool: {a.name} scripts/image_sbom.py"]},
        "packages": packages,
        "relationships": relationships,
    }
    json.dump(document, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
