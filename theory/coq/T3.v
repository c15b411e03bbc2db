(* T3: n · c/(c+n−1) -> c and n/(1+(n−1)c) -> 1/c as n -> oo (limits over the reals).
   Covers: n·c/(c+n−1) -> c and n/(1+(n−1)c) -> 1/c as the real n -> ∞ (Coquelicot's
     is_lim), the Θ(1/n) constants of T1's two ends.
   Leaves out: nothing of the sympy claim; a limit over the reals gives the one over set
     sizes. *)
From Coq Require Import Reals Lra.
From Coquelicot Require Import Coquelicot.
From SoftmaxDispersion Require Import Statements Limits.
Open Scope R_scope.

Theorem T3 : T3_statement.
Proof.
  unfold T3_statement. intros delta theta Htheta Hdelta.
  set (c := exp (delta / theta)).
  assert (Hc : 0 < c) by apply exp_pos.
  assert (Hinv : exp (- delta / theta) = 1 / c).
  { replace (- delta / theta) with (- (delta / theta)) by (field; lra).
    rewrite exp_Ropp. fold c. field. lra. }
  split.
  - rewrite Hinv.
    apply is_lim_ext with (fun n => (1 * n + 0) / (c * n + (1 - c))).
    + intro n. f_equal; ring.
    + apply lim_ratio. lra.
  - replace (Finite c) with (Finite (c / 1)) by (f_equal; field).
    apply is_lim_ext with (fun n => (c * n + 0) / (1 * n + (c - 1))).
    + intro n. f_equal; ring.
    + apply lim_ratio. lra.
Qed.
