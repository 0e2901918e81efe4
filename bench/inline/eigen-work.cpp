// SPDX-License-Identifier: GPL-2.0
/*
 * eigen-work: the C++ program of the inline bench, built against Eigen 3.4
 * (Debian's eigen3 source package, header only) at -O2 -g: expression
 * templates, fixed-size kernels, a dense LU, a QR and a sparse solve, so
 * most of its code is templates inlined many levels deep.
 */
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <Eigen/Dense>
#include <Eigen/Sparse>

using Eigen::Index;

static double fixed_kernels(int iters)
{
	Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
	Eigen::Vector4d v(1, 2, 3, 4);
	Eigen::Matrix3f r = Eigen::Matrix3f::Identity();
	double acc = 0;

	for (int i = 0; i < iters; i++) {
		Eigen::Matrix4d d = Eigen::Matrix4d::Constant(1e-6 * (i % 7));

		m = (m * 0.999 + d).eval();
		v = (m.transpose() * v).normalized() + Eigen::Vector4d::Ones() * 1e-3;
		r = (r * Eigen::AngleAxisf(0.001f * i, Eigen::Vector3f::UnitZ())).eval();
		acc += v.dot(v) + m.trace() + r.determinant();
	}
	return acc;
}

static double dense_solve(int n, int reps)
{
	double acc = 0;

	for (int k = 0; k < reps; k++) {
		Eigen::MatrixXd a = Eigen::MatrixXd::Random(n, n);
		Eigen::VectorXd b = Eigen::VectorXd::Random(n);

		a.diagonal().array() += n;
		Eigen::VectorXd x = a.partialPivLu().solve(b);
		Eigen::MatrixXd q = a.householderQr().householderQ();
		Eigen::MatrixXd c = (a.transpose() * a).cwiseAbs().array().sqrt().matrix();

		acc += x.norm() + q.col(0).sum() + c.mean() +
		       (a * x - b).cwiseAbs().maxCoeff();
	}
	return acc;
}

static double sparse_solve(int n, int reps)
{
	double acc = 0;

	for (int k = 0; k < reps; k++) {
		std::vector<Eigen::Triplet<double>> t;
		Eigen::SparseMatrix<double> a(n, n);
		Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
		Eigen::ConjugateGradient<Eigen::SparseMatrix<double>> cg;

		for (int i = 0; i < n; i++) {
			t.emplace_back(i, i, 4.0 + (i % 3));
			if (i > 0)
				t.emplace_back(i, i - 1, -1.0);
			if (i + 1 < n)
				t.emplace_back(i, i + 1, -1.0);
			if (i + 37 < n) {
				t.emplace_back(i, i + 37, -0.5);
				t.emplace_back(i + 37, i, -0.5);
			}
		}
		a.setFromTriplets(t.begin(), t.end());
		cg.compute(a);
		acc += cg.solve(b).sum();
	}
	return acc;
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 1;
	double acc = 0;

	acc += fixed_kernels(400000 * scale);
	acc += dense_solve(160, 12 * scale);
	acc += sparse_solve(20000, 6 * scale);
	printf("%g\n", acc);
	return 0;
}
