(* T4: every coefficient is at most ε iff n >= n*(ε) = 1 + c(1−ε)/ε.  Sufficiency for
   every admissible logit vector comes from T1's upper bound; below n* the spike
   (which attains that bound, T1) exceeds ε.
   Covers: every coefficient of softmax over a list of logits in [m, M] is at most ε once n
     >= 1 + c(1−ε)/ε, and below that size the spike's top coefficient exceeds ε.
   Leaves out: nothing of the sympy claim. *)
From Coq Require Import Reals List Lra Psatz.
From SoftmaxDispersion Require Import Statements Lemmas T1.
Open Scope R_scope.

Theorem T4 : T4_statement.
Proof.
  unfold T4_statement.
  intros M S e_k eps m n theta l Hlen HS Htheta Hmk HkM Hn He0 He1 Hmj HjM.
  destruct (T1 M S e_k m n theta l Hlen HS Htheta Hn Hmk HkM Hmj HjM)
    as [_ [Hup [_ Hspike]]].
  set (c := exp ((M - m) / theta)) in *.
  assert (Hc : 0 < c) by apply exp_pos.
  set (k := (1 - eps) * c / eps).
  assert (Hk : k * eps = (1 - eps) * c) by (unfold k; field; lra).
  assert (Hd : 0 < n + c - 1) by lra.
  split; intros Hsize.
  - (* n >= 1 + k: c/(c+n−1) <= ε *)
    eapply Rle_trans; [exact Hup |].
    apply frac_le_const; nra.
  - (* n < 1 + k: the spike's coefficient c/(c+n−1) exceeds ε *)
    rewrite Hspike. apply Rlt_gt.
    apply const_lt_frac; nra.
Qed.
