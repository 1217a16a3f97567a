#!/usr/bin/env python3
"""bench/apiserver_profile.py sorts a profile's samples into the webhook client's parts.

    apiserver_profile_test.py SCRIPT TRACES

TRACES is `go tool pprof -traces` text (tests/fixtures/bench/apiserver-traces.txt) with one
stack per part, including the cases where the first match decides: a decode inside json-patch's
Apply is the patch's, a decode under rest's transformResponse is the answer's, and one directly
under the dispatcher is the patched Pod's; a frame marked "(inline)" still names its function.
"""
import subprocess
import sys
import unittest

SCRIPT, TRACES = sys.argv[1], sys.argv[2]


def run(*args):
    with open(TRACES) as traces:
        return subprocess.run([sys.executable, SCRIPT, *args], stdin=traces, capture_output=True, text=True)


class ApiserverProfileTest(unittest.TestCase):
    def test_each_sample_goes_to_its_part_per_created_pod(self):
        out = run("--tsv", "10")
        self.assertEqual(out.returncode, 0, out.stderr)
        header, values = out.stdout.splitlines()
        parts = dict(zip(header.split("\t"), map(float, values.split("\t"))))
        # 1,500 ms of samples over 10 Pods.
        self.assertEqual(parts["kube-apiserver"], 150.0)
        self.assertEqual(parts["encoding the review"], 10.0)
        self.assertEqual(parts["HTTP request and answer"], 5.0)
        self.assertEqual(parts["decoding the answer"], 3.0)
        self.assertEqual(parts["applying the patch"], 20.0)
        self.assertEqual(parts["decoding the patched Pod"], 12.0)
        self.assertEqual(parts["comparing for reinvocation"], 4.0)
        self.assertEqual(parts["the rest of the webhook call"], 1.0)
        self.assertEqual(parts["webhook connection read/write loops"], 6.0)
        self.assertEqual(parts["in-tree admission plugins"], 2.0)
        self.assertEqual(parts["garbage collection"], 17.0)
        self.assertEqual(parts["everything else"], 70.0)
        # The webhook client is the sum of its eight parts: 10 + 5 + 6 + 3 + 20 + 12 + 4 + 1.
        self.assertEqual(parts["webhook client"], 61.0)

    def test_the_line_for_people_says_the_same(self):
        out = run("10")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("kube-apiserver CPU per Pod 150.000 ms, of it the webhook client 61.000 ms", out.stdout)
        self.assertIn("applying the patch 20.000", out.stdout)

    def test_a_count_of_pods_that_is_not_a_positive_number_is_refused(self):
        for bad in ([], ["0"], ["ten"], ["--tsv"]):
            with self.subTest(args=bad):
                out = run(*bad)
                self.assertNotEqual(out.returncode, 0)
                self.assertIn("usage", out.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
