"""Checks of the benchmark's own tools (not part of `make test`; the bench is not a test):
  .build/bench-venv/bin/python bench/python/test_bench.py

- jax_bench.JavaRandom reproduces java.util.Random (expected values printed by Java 17:
  `new Random(12345)`, nextInt(7996 - i) for i < 8, then nextInt(64), nextInt(1000000007)), so JAX
  trains on the digits in the order the JVM systems use;
- the LeNet FLOP count of peers.py equals the formula of bench/rust/src/lenet.rs;
- bench/spark/torch_distributor_tta.py's java_shuffled_order is MnistData.shuffledOrder (values
  printed by Java 17 for 7,996 digits and seed 12345), so TorchDistributor trains on ferrodl's minibatches;
- report.write_doc moves only the replaced part's section to "Previous results" and keeps the rest.
"""

import importlib.util
import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, BENCH)


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


class JavaRandomTest(unittest.TestCase):
    def test_matches_java_util_random(self):
        jb = load("jax_bench", os.path.join(BENCH, "jvm", "jax", "jax_bench.py"))
        r = jb.JavaRandom(12345)
        got = [r.next_int(7996 - i) for i in range(8)] + [r.next_int(64), r.next_int(1000000007)]
        self.assertEqual(got, [2927, 6325, 4057, 5635, 895, 1200, 2845, 3423, 15, 75883389])


class TorchDistributorOrderTest(unittest.TestCase):
    def test_matches_mnist_data_shuffled_order(self):
        td = load("torch_distributor_tta", os.path.join(BENCH, "spark", "torch_distributor_tta.py"))
        order = td.java_shuffled_order(7996, 12345)
        h = 0
        for x in order:  # Java: long h = h * 31 + o[i], wrapping
            h = (h * 31 + x) & ((1 << 64) - 1)
        self.assertEqual((order[0], order[1], order[-1], h - (1 << 64) if h >> 63 else h),
                         (2370, 1907, 2927, 2941978980730990108))
        self.assertEqual(sorted(order), list(range(7996)))


class FlopTest(unittest.TestCase):
    def test_lenet_count_matches_the_rust_formula(self):
        import peers

        self.assertEqual(peers.LENET_FORWARD_MULADDS, 2_293_000)
        self.assertEqual(peers.MODELS["cnn"][2], 13_758_000)
        self.assertEqual(peers.MODELS["mlp"][2], 6 * 443_610)
        src = open(os.path.join(BENCH, "rust", "src", "lenet.rs")).read()
        expr = re.search(r"pub const FORWARD_MULADDS: usize = ([^;]+);", src).group(1)
        self.assertEqual(eval(expr), peers.LENET_FORWARD_MULADDS)  # noqa: S307 - our own constant
        expr = re.search(r"pub const PARAMS: usize = ([^;]+);", src).group(1)
        self.assertEqual(eval(expr), peers.LENET_PARAMS)  # noqa: S307


class WriteDocTest(unittest.TestCase):
    def test_replaces_one_part_and_demotes_only_it(self):
        import report

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "B.md")
            open(path, "w").write("# B\n\nhand-written\n\n" + report.LATEST_START + "\n## Latest results — old\n\n"
                                  "### GEMM\n\nold table\n" + report.LATEST_END + "\n\n" + report.PREVIOUS
                                  + "\n## Previous results\n\n### Run of older\n")
            report.write_doc(path, {"gemm": "### G — d1\n\nA", "jvm": "### J — d1\n\nB"}, ["s1"])
            doc = open(path).read()
            # the old single-run block moved whole, headings one level down
            self.assertIn("### Run of old\n\n#### GEMM\n\nold table", doc)
            self.assertIn("### G — d1\n\nA", doc)
            self.assertIn("Not measured yet in this layout: `make bench BENCH_PARTS=cluster`", doc)
            report.write_doc(path, {"gemm": "### G — d2\n\nC"}, ["s2"])
            doc = open(path).read()
            latest = doc[doc.index(report.LATEST_START):doc.index(report.LATEST_END)]
            previous = doc[doc.index(report.PREVIOUS):]
            self.assertIn("### G — d2\n\nC", latest)
            self.assertIn("### J — d1\n\nB", latest)  # the jvm part did not run: kept
            self.assertNotIn("d1\n\nA", latest)
            self.assertIn("### G — d1\n\nA", previous)  # the replaced gemm section, unchanged
            self.assertNotIn("J — d1", previous)
            self.assertTrue(doc.startswith("# B\n\nhand-written\n"))
            self.assertEqual(doc.count(report.LATEST_START), 1)
            # newest previous entry first
            self.assertLess(previous.index("G — d1"), previous.index("Run of old"))
            self.assertLess(previous.index("Run of old"), previous.index("Run of older"))


if __name__ == "__main__":
    unittest.main()
