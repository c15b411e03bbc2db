(* T5: a coefficient >= 1 − ε among n >= 2 needs (M−m)/θ >= log((n−1)(1−ε)/ε):
   by T1, 1 − ε <= c/(c+n−1), which rearranges to c >= (n−1)(1−ε)/ε.
   Covers: a coefficient of at least 1 − ε among n >= 2 logits in [m, M] forces (M−m)/θ >=
     ln((n−1)(1−ε)/ε).
   Leaves out: nothing of the sympy claim. *)
From Coq Require Import Reals List Lra Psatz.
From SoftmaxDispersion Require Import Statements Lemmas T1.
Open Scope R_scope.

Theorem T5 : T5_statement.
Proof.
  unfold T5_statement.
  intros M S e_k eps m n theta l Hlen HS Htheta Hmk HkM Hn He0 He1 Hsharp Hmj HjM.
  assert (Hn1 : n >= 1) by lra.
  destruct (T1 M S e_k m n theta l Hlen HS Htheta Hn1 Hmk HkM Hmj HjM) as [_ [Hup _]].
  rewrite <- (ln_exp ((M - m) / theta)).
  set (c := exp ((M - m) / theta)) in *.
  assert (Hc : 0 < c) by apply exp_pos.
  assert (Hd : 0 < n + c - 1) by lra.
  assert (Hpos : 0 < (1 - eps) * (n - 1) / eps)
    by (apply Rdiv_lt_0_compat; [apply Rmult_lt_0_compat |]; lra).
  apply ln_le_of_le; [exact Hpos |].
  (* 1 − ε <= c/(n + c − 1) gives (1 − ε)(n − 1) <= ε c *)
  assert (Hbound : 1 - eps <= c / (n + c - 1)) by lra.
  assert (Hcross : (1 - eps) * (n + c - 1) <= c).
  { apply (Rmult_le_compat_r (n + c - 1)) in Hbound; [| lra].
    replace (c / (n + c - 1) * (n + c - 1)) with c in Hbound by (field; lra). exact Hbound. }
  apply frac_le_const; nra.
Qed.
