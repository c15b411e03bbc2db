(* T12, rounding: Flocq's error bounds for round-to-nearest in a binary FLT format
   (precision prec, smallest exponent emin: binary64 is prec = 53, emin = −1074), and
   the error of a sum computed as any binary tree of rounded additions.
   Hand-written; no axiom. *)
From Coq Require Import Reals List Lra Psatz Lia Permutation.
From Flocq Require Import Core Relative Plus_error.
From SoftmaxDispersion Require Import Statements T12_Reals.
Open Scope R_scope.

(* -- the unit roundoff u = 2^−prec -------------------------------------------------- *)

Lemma fr_u_ro (prec : Z) : u_ro radix2 prec = bpow radix2 (- prec).
Proof.
  unfold u_ro. replace (- prec + 1)%Z with (1 + - prec)%Z by lia.
  rewrite bpow_plus. simpl (bpow radix2 1). rewrite IZR_Zpower_pos. simpl. field.
Qed.

Lemma fr_u_bounds (prec : Z) : (1 < prec)%Z -> 0 < bpow radix2 (- prec) <= / 4.
Proof.
  intros Hp. split; [apply bpow_gt_0 |].
  replace (/ 4) with (bpow radix2 (-2)) by (simpl; rewrite IZR_Zpower_pos; simpl; field).
  apply bpow_le; lia.
Qed.

Lemma fr_u_div (u : R) : 0 <= u -> u / (1 + u) <= u.
Proof.
  intros Hu. apply (Rmult_le_reg_r (1 + u)); [lra |].
  replace (u / (1 + u) * (1 + u)) with u by (field; lra). nra.
Qed.

Lemma fr_prec_gt_0 (prec : Z) : (1 < prec)%Z -> Prec_gt_0 prec.
Proof. unfold Prec_gt_0; lia. Qed.

(* -- single roundings ----------------------------------------------------------------- *)

Lemma fr_is_float_fl (prec emin : Z) (choice : Z -> bool) (x : R) :
  (1 < prec)%Z -> is_float prec emin (fl prec emin choice x).
Proof.
  intros Hp. pose proof (fr_prec_gt_0 prec Hp).
  apply generic_format_round; [apply FLT_exp_valid; exact H | apply valid_rnd_N].
Qed.

Lemma fr_fl_le (prec emin : Z) (choice : Z -> bool) (x y : R) :
  (1 < prec)%Z -> x <= y -> fl prec emin choice x <= fl prec emin choice y.
Proof.
  intros Hp Hxy. pose proof (fr_prec_gt_0 prec Hp).
  apply round_le; [apply FLT_exp_valid; exact H | apply valid_rnd_N | exact Hxy].
Qed.

Lemma fr_fl_float (prec emin : Z) (choice : Z -> bool) (x : R) :
  is_float prec emin x -> fl prec emin choice x = x.
Proof. intros Hx. apply round_generic; [apply valid_rnd_N | exact Hx]. Qed.

Lemma fr_fl_0 (prec emin : Z) (choice : Z -> bool) : fl prec emin choice 0 = 0.
Proof. apply round_0, valid_rnd_N. Qed.

Lemma fr_is_float_0 (prec emin : Z) : is_float prec emin 0.
Proof. apply generic_format_0. Qed.

(* A rounded sum of two floats has a relative error of at most u/(1 + u): no absolute
   term, because a sum below the normal range is exact (Flocq's FLT_plus_error_N_ex). *)
Lemma fr_plus_error (prec emin : Z) (choice : Z -> bool) (x y : R) :
  (1 < prec)%Z -> is_float prec emin x -> is_float prec emin y ->
  exists eps, Rabs eps <= bpow radix2 (- prec) / (1 + bpow radix2 (- prec)) /\
  fl prec emin choice (x + y) = (x + y) * (1 + eps).
Proof.
  intros Hp Hx Hy. pose proof (fr_prec_gt_0 prec Hp).
  destruct (FLT_plus_error_N_ex radix2 emin prec choice x y Hx Hy) as (eps & Heps & Hr).
  exists eps. rewrite <- fr_u_ro. split; [exact Heps | exact Hr].
Qed.

(* So a rounded sum of two floats with x + y >= 0 lies in [(x + y)/(1 + u), (x + y)(1 + u)]. *)
Lemma fr_plus_bounds (prec emin : Z) (choice : Z -> bool) (x y : R) :
  (1 < prec)%Z -> is_float prec emin x -> is_float prec emin y -> 0 <= x + y ->
  (x + y) / (1 + bpow radix2 (- prec)) <= fl prec emin choice (x + y)
  <= (x + y) * (1 + bpow radix2 (- prec)).
Proof.
  intros Hp Hx Hy Hs.
  destruct (fr_plus_error prec emin choice x y Hp Hx Hy) as (eps & Heps & ->).
  assert (Hu := fr_u_bounds prec Hp). set (u := bpow radix2 (- prec)) in *.
  apply Rabs_le_inv in Heps.
  assert (Hlo : / (1 + u) <= 1 + eps).
  { replace (/ (1 + u)) with (1 - u / (1 + u)) by (field; lra). lra. }
  assert (Hhi : 1 + eps <= 1 + u).
  { assert (u / (1 + u) <= u) by (apply fr_u_div; lra). lra. }
  split; [unfold Rdiv; rewrite Rmult_comm | rewrite Rmult_comm]; nra.
Qed.

(* The rounded difference of two floats: a relative error of at most u. *)
Lemma fr_minus_error (prec emin : Z) (choice : Z -> bool) (a b : R) :
  (1 < prec)%Z -> is_float prec emin a -> is_float prec emin b ->
  exists delta, Rabs delta <= bpow radix2 (- prec) /\
  fl prec emin choice (a - b) = (a - b) * (1 + delta).
Proof.
  intros Hp Ha Hb.
  assert (Hb' : is_float prec emin (- b)) by (apply generic_format_opp; exact Hb).
  destruct (fr_plus_error prec emin choice a (- b) Hp Ha Hb') as (d & Hd & Hr).
  exists d. split; [| exact Hr].
  assert (Hu := fr_u_bounds prec Hp).
  apply Rle_trans with (1 := Hd). apply fr_u_div; lra.
Qed.

(* Any rounding: either a relative error of at most u/(1+u) or an absolute one of at
   most half the smallest subnormal, never both (Flocq's relative_error_N_FLT'_ex). *)
Lemma fr_round_error (prec emin : Z) (choice : Z -> bool) (z : R) :
  (1 < prec)%Z ->
  exists eps eta, Rabs eps <= bpow radix2 (- prec) / (1 + bpow radix2 (- prec)) /\
  Rabs eta <= / 2 * bpow radix2 emin /\ eps * eta = 0 /\
  fl prec emin choice z = z * (1 + eps) + eta.
Proof.
  intros Hp. assert (H0 : (0 < prec)%Z) by lia.
  destruct (relative_error_N_FLT'_ex radix2 emin prec H0 choice z) as (e & h & He & Hh & H & Hr).
  exists e, h. rewrite <- fr_u_ro. repeat split; assumption.
Qed.

(* In the normal range, only the relative error: |x| >= 2^(emin + prec − 1) = tiny/(2u). *)
Lemma fr_round_normal (prec emin : Z) (choice : Z -> bool) (x : R) :
  (1 < prec)%Z -> bpow radix2 (emin + prec - 1) <= Rabs x ->
  exists eps, Rabs eps <= bpow radix2 (- prec) / (1 + bpow radix2 (- prec)) /\
  fl prec emin choice x = x * (1 + eps).
Proof.
  intros Hp Hx. pose proof (fr_prec_gt_0 prec Hp). assert (H0 : (0 < prec)%Z) by lia.
  destruct (relative_error_N_FLX'_ex radix2 prec H0 choice x) as (eps & Heps & Hr).
  exists eps. rewrite <- fr_u_ro. split; [exact Heps |].
  unfold fl. rewrite round_FLT_FLX; assumption.
Qed.

Lemma fr_bpow_pred (e : Z) : bpow radix2 (e - 1) = bpow radix2 e / 2.
Proof.
  replace (e - 1)%Z with (e + -1)%Z by lia. rewrite bpow_plus.
  replace (bpow radix2 (-1)) with (/ 2) by (simpl; rewrite IZR_Zpower_pos; simpl; field).
  field.
Qed.

Lemma fr_smallest_normal (prec emin : Z) :
  bpow radix2 (emin + prec - 1) = bpow radix2 emin / (2 * bpow radix2 (- prec)).
Proof.
  assert (Hu := bpow_gt_0 radix2 (- prec)).
  assert (H : 2 * bpow radix2 (- prec) * bpow radix2 (emin + prec - 1) = bpow radix2 emin).
  { rewrite Rmult_assoc, <- bpow_plus.
    replace (- prec + (emin + prec - 1))%Z with (-1 + emin)%Z by lia.
    rewrite bpow_plus. simpl (bpow radix2 (-1)). rewrite IZR_Zpower_pos. simpl. field. }
  rewrite <- H. field. lra.
Qed.

(* -- a sum as any binary tree of rounded additions --------------------------------- *)

Lemma fr_leaves_nonempty (t : sum_tree) : (1 <= length (leaves t))%nat.
Proof. induction t; simpl; [lia | rewrite app_length; lia]. Qed.

(* A tree of L leaves has depth at most L − 1. *)
Lemma fr_depth_le (t : sum_tree) : (tree_depth t <= length (leaves t) - 1)%nat.
Proof.
  induction t as [x | l IHl r IHr]; simpl; [lia |].
  rewrite app_length. pose proof (fr_leaves_nonempty l). pose proof (fr_leaves_nonempty r).
  lia.
Qed.

Definition fr_leaf_sum (t : sum_tree) : R := fold_right Rplus 0 (leaves t).

Lemma fr_leaf_sum_node (l r : sum_tree) :
  fr_leaf_sum (Node l r) = fr_leaf_sum l + fr_leaf_sum r.
Proof.
  unfold fr_leaf_sum; simpl. rewrite fold_right_app.
  generalize (fold_right Rplus 0 (leaves r)). induction (leaves l); intros s; simpl; [ring |].
  rewrite IHl0. ring.
Qed.

Definition fr_good_leaves (prec emin : Z) (t : sum_tree) : Prop :=
  forall x, In x (leaves t) -> is_float prec emin x /\ 0 <= x.

Lemma fr_good_node (prec emin : Z) (l r : sum_tree) :
  fr_good_leaves prec emin (Node l r) -> fr_good_leaves prec emin l /\ fr_good_leaves prec emin r.
Proof.
  intros H; split; intros x Hx; apply H; simpl; apply in_or_app; [left | right]; exact Hx.
Qed.

(* The computed sum of nonnegative floats is a nonnegative float. *)
Lemma fr_tree_sum_float (prec emin : Z) (choice : Z -> bool) (t : sum_tree) :
  (1 < prec)%Z -> fr_good_leaves prec emin t ->
  is_float prec emin (tree_sum prec emin choice t) /\ 0 <= tree_sum prec emin choice t.
Proof.
  intros Hp. induction t as [x | l IHl r IHr]; intros Hg.
  - apply Hg. simpl; left; reflexivity.
  - destruct (fr_good_node _ _ _ _ Hg) as [Hl Hr].
    destruct (IHl Hl) as [Fl Pl]. destruct (IHr Hr) as [Fr Pr]. simpl.
    split; [apply fr_is_float_fl, Hp |].
    rewrite <- (fr_fl_0 prec emin choice). apply fr_fl_le; [exact Hp | lra].
Qed.

(* ... and at least each of its leaves (rounding is monotone, a float rounds to itself). *)
Lemma fr_tree_sum_ge_leaf (prec emin : Z) (choice : Z -> bool) (t : sum_tree) (y : R) :
  (1 < prec)%Z -> fr_good_leaves prec emin t -> In y (leaves t) ->
  y <= tree_sum prec emin choice t.
Proof.
  intros Hp. induction t as [x | l IHl r IHr]; intros Hg Hy.
  - destruct Hy as [<- | []]. simpl; lra.
  - destruct (fr_good_node _ _ _ _ Hg) as [Hl Hr].
    destruct (fr_tree_sum_float prec emin choice l Hp Hl) as [Fl Pl].
    destruct (fr_tree_sum_float prec emin choice r Hp Hr) as [Fr Pr].
    simpl in Hy |- *. apply in_app_or in Hy as [Hy | Hy].
    + apply Rle_trans with (tree_sum prec emin choice l); [apply IHl; assumption |].
      rewrite <- (fr_fl_float prec emin choice _ Fl) at 1. apply fr_fl_le; [exact Hp | lra].
    + apply Rle_trans with (tree_sum prec emin choice r); [apply IHr; assumption |].
      rewrite <- (fr_fl_float prec emin choice _ Fr) at 1. apply fr_fl_le; [exact Hp | lra].
Qed.

(* The error of the tree: S/(1 + u)^d <= computed <= S (1 + u)^d, d the depth. *)
Lemma fr_tree_sum_bounds (prec emin : Z) (choice : Z -> bool) (t : sum_tree) :
  (1 < prec)%Z -> fr_good_leaves prec emin t ->
  fr_leaf_sum t / (1 + bpow radix2 (- prec)) ^ tree_depth t <= tree_sum prec emin choice t
  <= fr_leaf_sum t * (1 + bpow radix2 (- prec)) ^ tree_depth t.
Proof.
  intros Hp. assert (Hu := fr_u_bounds prec Hp). set (u := bpow radix2 (- prec)) in *.
  induction t as [x | l IHl r IHr]; intros Hg.
  - unfold fr_leaf_sum; simpl. lra.
  - destruct (fr_good_node _ _ _ _ Hg) as [Hl Hr].
    destruct (fr_tree_sum_float prec emin choice l Hp Hl) as [Fl Pl].
    destruct (fr_tree_sum_float prec emin choice r Hp Hr) as [Fr Pr].
    specialize (IHl Hl). specialize (IHr Hr).
    rewrite fr_leaf_sum_node. simpl tree_sum. simpl tree_depth.
    set (sl := tree_sum prec emin choice l) in *. set (sr := tree_sum prec emin choice r) in *.
    set (Sl := fr_leaf_sum l) in *. set (Sr := fr_leaf_sum r) in *.
    set (dl := tree_depth l) in *. set (dr := tree_depth r) in *.
    assert (HSl : 0 <= Sl).
    { unfold Sl, fr_leaf_sum. rewrite <- (map_id (leaves l)).
      apply fs_sum_nonneg; intros x Hx; apply Hl, Hx. }
    assert (HSr : 0 <= Sr).
    { unfold Sr, fr_leaf_sum. rewrite <- (map_id (leaves r)).
      apply fs_sum_nonneg; intros x Hx; apply Hr, Hx. }
    assert (Hpow : forall k, (k <= Nat.max dl dr)%nat -> 1 <= (1 + u) ^ k <= (1 + u) ^ Nat.max dl dr).
    { intros k Hk. split; [apply pow_R1_Rle; lra | apply Rle_pow; [lra | exact Hk]]. }
    destruct (Hpow dl (Nat.le_max_l _ _)) as [Hl1 Hl2].
    destruct (Hpow dr (Nat.le_max_r _ _)) as [Hr1 Hr2].
    set (P := (1 + u) ^ Nat.max dl dr) in *.
    assert (HP1 : (1 + u) ^ S (Nat.max dl dr) = (1 + u) * P) by reflexivity.
    rewrite HP1.
    destruct (fr_plus_bounds prec emin choice sl sr Hp Fl Fr ltac:(lra)) as [Lo Hi].
    (* upper: each subtree within its own factor, which is at most P *)
    assert (Hsl : sl <= Sl * P) by (apply Rle_trans with (Sl * (1 + u) ^ dl); [lra | apply Rmult_le_compat_l; lra]).
    assert (Hsr : sr <= Sr * P) by (apply Rle_trans with (Sr * (1 + u) ^ dr); [lra | apply Rmult_le_compat_l; lra]).
    (* lower: S/(1+u)^d >= S/P *)
    assert (Hdl : Sl / P <= sl).
    { apply Rle_trans with (Sl / (1 + u) ^ dl); [| lra].
      apply Rmult_le_compat_l; [lra |]. apply Rinv_le_contravar; lra. }
    assert (Hdr : Sr / P <= sr).
    { apply Rle_trans with (Sr / (1 + u) ^ dr); [| lra].
      apply Rmult_le_compat_l; [lra |]. apply Rinv_le_contravar; lra. }
    split.
    + apply Rle_trans with ((sl + sr) / (1 + u)); [| exact Lo].
      replace ((Sl + Sr) / ((1 + u) * P)) with ((Sl / P + Sr / P) / (1 + u)) by (field; lra).
      apply Rmult_le_compat_r; [apply Rlt_le, Rinv_0_lt_compat; lra | lra].
    + apply Rle_trans with ((sl + sr) * (1 + u)); [exact Hi |].
      replace ((Sl + Sr) * ((1 + u) * P)) with ((Sl * P + Sr * P) * (1 + u)) by ring.
      apply Rmult_le_compat_r; lra.
Qed.

(* (1 + u)^d <= 1/(1 − d u) = 1 + γ_d while d u < 1. *)
Lemma fr_pow_le_gamma (u : R) (d : nat) :
  0 <= u -> INR d * u < 1 -> (1 + u) ^ d <= 1 + INR d * u / (1 - INR d * u).
Proof.
  intros Hu. induction d as [| d IH]; intros Hd.
  - simpl. lra.
  - rewrite S_INR in Hd |- *.
    assert (Hd' : INR d * u < 1) by (assert (0 <= INR d) by apply pos_INR; nra).
    specialize (IH Hd'). simpl ((1 + u) ^ S d).
    replace (1 + (INR d + 1) * u / (1 - (INR d + 1) * u)) with (/ (1 - (INR d + 1) * u)) by (field; lra).
    replace (1 + INR d * u / (1 - INR d * u)) with (/ (1 - INR d * u)) in IH by (field; lra).
    apply Rle_trans with ((1 + u) * / (1 - INR d * u)); [apply Rmult_le_compat_l; lra |].
    apply (Rmult_le_reg_r ((1 - INR d * u) * (1 - (INR d + 1) * u))); [nra |].
    replace ((1 + u) * / (1 - INR d * u) * ((1 - INR d * u) * (1 - (INR d + 1) * u)))
      with ((1 + u) * (1 - (INR d + 1) * u)) by (field; lra).
    replace (/ (1 - (INR d + 1) * u) * ((1 - INR d * u) * (1 - (INR d + 1) * u)))
      with (1 - INR d * u) by (field; lra).
    assert (0 <= (INR d + 1) * (u * u)) by (apply Rmult_le_pos; [pose proof (pos_INR d); lra | nra]).
    nra.
Qed.

(* -- the hypotheses are satisfiable: the correctly rounded exp is accurate --------- *)

Lemma fr_is_float_1 (prec emin : Z) : (1 < prec)%Z -> (emin <= 0)%Z -> is_float prec emin 1.
Proof.
  intros Hp He. pose proof (fr_prec_gt_0 prec Hp).
  apply generic_format_FLT_1; assumption.
Qed.

(* fl ∘ exp: a relative error u/(1 + u) <= u, or an absolute one of half a subnormal. *)
Lemma fr_correctly_rounded_exp (prec emin : Z) (choice : Z -> bool) :
  (1 < prec)%Z -> (emin <= 0)%Z ->
  exp_accurate prec emin (fun x => fl prec emin choice (exp x))
    (bpow radix2 (- prec)) (bpow radix2 emin / 2).
Proof.
  intros Hp He. split.
  - rewrite exp_0. apply fr_fl_float, fr_is_float_1; assumption.
  - intros x _ _. split; [apply fr_is_float_fl, Hp |]. split.
    + rewrite <- (fr_fl_0 prec emin choice). apply fr_fl_le; [exact Hp | apply Rlt_le, exp_pos].
    + destruct (fr_round_error prec emin choice (exp x) Hp) as (eps & eta & Heps & Heta & H0 & ->).
      assert (Hu := fr_u_bounds prec Hp).
      assert (Hud := fr_u_div (bpow radix2 (- prec)) ltac:(lra)).
      assert (Hex := exp_pos x).
      apply Rabs_le_inv in Heps. apply Rabs_le_inv in Heta.
      replace (exp x * (1 + eps) + eta - exp x) with (eps * exp x + eta) by ring.
      apply Rabs_le. split; nra.
Qed.

(* fl ∘ ln on floats y >= 1: the correctly rounded log is accurate (relative u, absolute
   half a subnormal). *)
Lemma fr_correctly_rounded_log (prec emin : Z) (choice : Z -> bool) :
  (1 < prec)%Z ->
  log_accurate prec emin (fun y => fl prec emin choice (ln y))
    (bpow radix2 (- prec)) (bpow radix2 emin / 2).
Proof.
  intros Hp y _ Hy.
  assert (Hln : 0 <= ln y).
  { rewrite <- ln_1. destruct (Rle_lt_or_eq_dec 1 y Hy) as [Hlt | <-];
      [apply Rlt_le, ln_increasing; lra | lra]. }
  split; [apply fr_is_float_fl, Hp |]. split.
  - rewrite <- (fr_fl_0 prec emin choice). apply fr_fl_le; [exact Hp | exact Hln].
  - destruct (fr_round_error prec emin choice (ln y) Hp) as (eps & eta & Heps & Heta & H0 & ->).
    assert (Hu := fr_u_bounds prec Hp).
    assert (Hud := fr_u_div (bpow radix2 (- prec)) ltac:(lra)).
    apply Rabs_le_inv in Heps. apply Rabs_le_inv in Heta.
    replace (ln y * (1 + eps) + eta - ln y) with (eps * ln y + eta) by ring.
    apply Rabs_le. split; nra.
Qed.
