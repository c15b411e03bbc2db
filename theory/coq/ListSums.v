(* Finite sums over lists of any element type (a family's members: reals, or tuples of
   reals), shared by T7, T9 and T13.  Hand-written; nothing here is an axiom. *)
From Coq Require Import Reals List Lra.
Open Scope R_scope.

Section ListSums.
Context {A : Type}.

Lemma lsum_ext (f g : A -> R) (l : list A) :
  (forall x, In x l -> f x = g x) ->
  fold_right Rplus 0 (map f l) = fold_right Rplus 0 (map g l).
Proof.
  induction l as [|x l IH]; intros H; cbn [map fold_right]; [reflexivity |].
  rewrite (H x (or_introl eq_refl)), IH; [reflexivity |].
  intros y Hy. apply H. right. exact Hy.
Qed.

Lemma lsum_le (f g : A -> R) (l : list A) :
  (forall x, In x l -> f x <= g x) ->
  fold_right Rplus 0 (map f l) <= fold_right Rplus 0 (map g l).
Proof.
  induction l as [|x l IH]; intros H; cbn [map fold_right]; [lra |].
  assert (Hx := H x (or_introl eq_refl)).
  assert (Hl : forall y, In y l -> f y <= g y) by (intros y Hy; apply H; right; exact Hy).
  specialize (IH Hl). lra.
Qed.

Lemma lsum_nonneg (f : A -> R) (l : list A) :
  (forall x, In x l -> 0 <= f x) -> 0 <= fold_right Rplus 0 (map f l).
Proof.
  induction l as [|x l IH]; intros H; cbn [map fold_right]; [lra |].
  assert (Hx := H x (or_introl eq_refl)).
  assert (Hl : forall y, In y l -> 0 <= f y) by (intros y Hy; apply H; right; exact Hy).
  specialize (IH Hl). lra.
Qed.

(* A non-empty list of positive terms has a positive sum. *)
Lemma lsum_pos (f : A -> R) (l : list A) :
  l <> nil -> (forall x, In x l -> 0 < f x) -> 0 < fold_right Rplus 0 (map f l).
Proof.
  destruct l as [|x l]; intros Hl H; [contradiction |]. cbn [map fold_right].
  assert (Hx := H x (or_introl eq_refl)).
  assert (0 <= fold_right Rplus 0 (map f l)).
  { apply lsum_nonneg. intros y Hy. left. apply H. right. exact Hy. }
  lra.
Qed.

(* Termwise bounds add up to the length times the bound. *)
Lemma lsum_upper (f : A -> R) (l : list A) (hi : R) :
  (forall x, In x l -> f x <= hi) -> fold_right Rplus 0 (map f l) <= INR (length l) * hi.
Proof.
  induction l as [|x l IH]; intros H; cbn [length map fold_right]; [simpl; lra |].
  rewrite S_INR.
  assert (Hx := H x (or_introl eq_refl)).
  assert (Hl : forall y, In y l -> f y <= hi) by (intros y Hy; apply H; right; exact Hy).
  specialize (IH Hl). lra.
Qed.

(* Linearity: Σ (a f + b g) = a Σ f + b Σ g, and with three parts. *)
Lemma lsum_lin2 (f g : A -> R) (a b : R) (l : list A) :
  fold_right Rplus 0 (map (fun x => a * f x + b * g x) l)
  = a * fold_right Rplus 0 (map f l) + b * fold_right Rplus 0 (map g l).
Proof. induction l as [|x l IH]; cbn [map fold_right]; [ring | rewrite IH; ring]. Qed.

Lemma lsum_lin3 (f g h : A -> R) (a b c : R) (l : list A) :
  fold_right Rplus 0 (map (fun x => a * f x + b * g x + c * h x) l)
  = a * fold_right Rplus 0 (map f l) + b * fold_right Rplus 0 (map g l)
    + c * fold_right Rplus 0 (map h l).
Proof. induction l as [|x l IH]; cbn [map fold_right]; [ring | rewrite IH; ring]. Qed.

Lemma lsum_scal (f : A -> R) (a : R) (l : list A) :
  fold_right Rplus 0 (map (fun x => a * f x) l) = a * fold_right Rplus 0 (map f l).
Proof. induction l as [|x l IH]; cbn [map fold_right]; [ring | rewrite IH; ring]. Qed.

End ListSums.

(* A list of length n >= 1 is not empty. *)
Lemma nonempty_of_length {A : Type} (l : list A) (n : R) :
  INR (length l) = n -> n >= 1 -> l <> nil.
Proof. intros Hlen Hn Hnil. subst l. simpl in Hlen. lra. Qed.
